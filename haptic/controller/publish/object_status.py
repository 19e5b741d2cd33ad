"""``ObjectStatusApplier`` (leader-only): writes the statuses templates declare with ``set_status``.

A render's statuses (``ValidationCompleted.statuses``: the ``gateway`` library's GatewayClass, Gateway
and HTTPRoute statuses, or any template's) describe the config it produced, so they are written once
that config is deployed to at least one HAProxy pod (``DeploymentCompleted`` of the same checksum),
or at once when the render changed nothing that needs deploying. Each object is looked up in the
watched stores and patched (merge patch of its ``status`` subresource) only when its status differs;
conditions keep their ``lastTransitionTime`` while their status stays (``haptic.templating.statuses``).
Objects gone from the stores are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import BecameLeader, DeploymentCompleted, ValidationCompleted
from haptic.core import Event, EventBus
from haptic.k8s.api import ApiError, ResourceRef
from haptic.templating.notices import object_ref
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

    def _current_objects(self, statuses: Iterable[ObjectStatus]) -> dict[tuple[str, str, str], tuple[Any, str]]:
        """(kind, namespace, name) -> (the stored object, its plural) for the statuses' API versions."""
        versions = {s.api_version for s in statuses}
        found: dict[tuple[str, str, str], tuple[Any, str]] = {}
        for name, watched in sorted(self.ctx.spec.watched_resources.items()):
            if watched.api_version not in versions or name not in self.ctx.stores:
                continue
            for obj in self.ctx.stores[name].list():
                ref = object_ref(obj)
                if ref is not None:
                    found.setdefault(ref.key, (obj, watched.resources))
        return found

    async def apply(self, statuses: tuple[ObjectStatus, ...]) -> None:
        current = self._current_objects(statuses)
        now = self.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        for item in statuses:
            hit = current.get(item.ref.key)
            if hit is None:
                continue
            obj, plural = hit
            body = status_patch(item.status, obj.get("status"), now)
            if body is None:
                continue
            ref = ResourceRef(item.api_version, plural, bool(item.ref.namespace), item.ref.kind)
            try:
                await self.ctx.ports.kube.patch(ref, item.ref.name, body, "merge",
                                                namespace=item.ref.namespace or None, subresource="status")
                self.patched += 1
            except ApiError as exc:
                self.logger.warning("status of %s not written: %s", item.ref, exc)
