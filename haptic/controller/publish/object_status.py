"""``ObjectStatusApplier`` (leader-only): writes the statuses templates declare with ``set_status``.

A render's statuses (``ValidationCompleted.statuses``: the ``gateway`` library's GatewayClass, Gateway
and HTTPRoute statuses, or any template's) describe the config it produced, so they are written once
that config is deployed to at least one HAProxy pod (``DeploymentCompleted`` of the same checksum),
or at once when the render changed nothing that needs deploying. Each object is looked up in the
watched stores and patched (merge patch of its ``status`` subresource) only when its status differs;
conditions keep their ``lastTransitionTime`` while their status stays (``haptic.templating.statuses``).
Objects gone from the stores are skipped. The cost follows what changed: an object is looked up by its
name, and one whose stored version and desired status are those that needed no patch last time (store
objects are replaced on change, never mutated) is not compared again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import BecameLeader, DeploymentCompleted, ValidationCompleted
from haptic.core import Event, EventBus
from haptic.core.identity import same_items
from haptic.k8s.api import ApiError, ResourceRef
from haptic.templating.statuses import ObjectStatus, status_patch


class ObjectStatusApplier(IterationComponent):
    name = "object-status"
    subscribes = (ValidationCompleted, DeploymentCompleted, BecameLeader)
    leader_only = True

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.pending: tuple[str, tuple[ObjectStatus, ...]] | None = None
        self.deployed_checksum = ""
        self.patched = 0
        # (kind, namespace, name) -> (the stored object, the desired status) that needed no patch: held, so
        # that the identity check cannot be fooled by a recycled id
        self._in_place: dict[tuple[str, str, str], tuple[Any, Mapping[str, Any]]] = {}
        # the statuses of the last apply that wrote nothing, with the change marks of the stores it read then
        self._settled: tuple[tuple[ObjectStatus, ...], list[tuple[Any, Any]]] | None = None

    async def handle(self, event: Event) -> None:
        if isinstance(event, ValidationCompleted):
            self.pending = (event.content_checksum, event.statuses)
            if event.content_checksum != self.deployed_checksum:
                return
        elif isinstance(event, DeploymentCompleted):
            if event.succeeded == 0:
                return
            self.deployed_checksum = event.content_checksum
        if self.pending is not None and self.pending[0] == self.deployed_checksum and self.pending[1]:
            await self.apply(self.pending[1])

    def _stores_for(self, statuses: Iterable[ObjectStatus]) -> dict[str, list[tuple[Any, str]]]:
        """API version -> the watched stores of it (name order) with their plural, for the statuses' versions."""
        versions = {s.api_version for s in statuses}
        found: dict[str, list[tuple[Any, str]]] = {}
        for name, watched in sorted(self.ctx.spec.watched_resources.items()):
            if watched.api_version in versions and name in self.ctx.stores:
                found.setdefault(watched.api_version, []).append((self.ctx.stores[name], watched.resources))
        return found

    @staticmethod
    def _lookup(item: ObjectStatus, stores: list[tuple[Any, str]]) -> tuple[Any, str] | None:
        """The stored object ``item`` is about (the first store of its API version holding one of its
        kind under its namespace/name) and that store's plural."""
        for store, plural in stores:
            obj = store.get(item.ref.namespace, item.ref.name)
            # the kind as ``object_ref`` reads it (namespace and name are the lookup's)
            if obj is not None and str(obj.get("kind") or "Object") == item.ref.kind:
                return obj, plural
        return None

    def _unchanged_since_settled(self, statuses: tuple[ObjectStatus, ...]) -> bool:
        """The same status objects as the last apply that wrote nothing, over stores nobody wrote to since."""
        if self._settled is None:
            return False
        before, marks = self._settled
        if not same_items(before, statuses):
            return False
        return all(store.unchanged_since(mark) for store, mark in marks)

    async def apply(self, statuses: tuple[ObjectStatus, ...]) -> None:
        if self._unchanged_since_settled(statuses):
            return
        stores = self._stores_for(statuses)
        marks = [(store, store.change_mark()) for group in stores.values() for store, _ in group]
        self._settled = None
        wrote = False
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        in_place, self._in_place = self._in_place, {}
        for item in statuses:
            key = item.ref.key
            hit = self._lookup(item, stores.get(item.api_version, []))
            if hit is None:
                continue
            obj, plural = hit
            known = in_place.get(key)
            if known is not None and known[0] is obj and (known[1] is item.status or known[1] == item.status):
                self._in_place[key] = known
                continue
            body = status_patch(item.status, obj.get("status"), now)
            if body is None:
                self._in_place[key] = (obj, item.status)
                continue
            ref = ResourceRef(item.api_version, plural, bool(item.ref.namespace), item.ref.kind)
            wrote = True
            try:
                await self.ctx.ports.kube.patch(ref, item.ref.name, body, "merge",
                                                namespace=item.ref.namespace or None, subresource="status")
                self.patched += 1
            except ApiError as exc:
                self.logger.warning("status of %s not written: %s", item.ref, exc)
        if not wrote and len(marks) == sum(len(group) for group in stores.values()):
            self._settled = (statuses, marks)
