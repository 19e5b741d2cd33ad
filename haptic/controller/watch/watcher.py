"""``ResourceWatcher``: keeps one watched resource type's store in sync with the API.

One per ``watchedResources`` entry plus ``haproxy-pods`` (Pods matching ``podSelector`` in the
controller's namespace). After the initial list it publishes ``resource.sync.complete`` and sets
``synced``; afterwards changes landing in the same loop step are folded into one
``resource.index.updated``. An object the store cannot index (no name, a key expression that fails
on it) is skipped with a log line naming it; the others keep flowing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from haptic.controller.context import IterationContext
from haptic.controller.events import ResourceIndexUpdated, ResourceSyncComplete
from haptic.core import Component, EventBus
from haptic.k8s.api import JSON, Selectors
from haptic.k8s.store import ResourceStore, StoreError, identity_of
from haptic.k8s.watch_loop import WatchState, list_and_watch
from haptic.names import HAPROXY_PODS


def describe(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(metadata, Mapping):
        return "<object without metadata>"
    ns, name = metadata.get("namespace"), metadata.get("name")
    return f"{ns}/{name}" if ns else str(name)


class ResourceWatcher(Component):
    name = "resource-watcher"

    def __init__(self, bus: EventBus, ctx: IterationContext, resource: str) -> None:
        # One component per resource type: the name is per instance.
        object.__setattr__(self, "name", f"watcher:{resource}")
        super().__init__(bus)
        self.ctx = ctx
        self.resource = resource
        self.store: ResourceStore = ctx.stores[resource]
        self.synced = asyncio.Event()
        self.skipped = 0
        self.logger = ctx.logger(f"watcher.{resource}")
        self._unselected: set[str] = set()
        self._counts = [0, 0, 0]
        self._flush_scheduled = False
        self.watch_state = WatchState()
        #: why the resource is not served (its CRD is missing; see ``CrdWatcher``): synced empty, not watched
        self.absent: str | None = None
        #: the namespaces objects are taken from (``namespaceSelector``; see ``NamespaceSelection``); None: all
        self.namespaces: frozenset[str] | None = None
        if resource == HAPROXY_PODS:
            self._namespace: str | None = ctx.namespace
            self._selectors = Selectors(label_selector=ctx.spec.pod_selector.label_selector)
        else:
            watched = ctx.spec.watched_resources[resource]
            self._namespace = None
            self._selectors = Selectors(label_selector=watched.label_selector)

    async def on_start(self) -> None:
        if self.absent is not None:
            self.logger.warning("not watching %s: %s; rendering without them until it is installed",
                                self.resource, self.absent)
            self._on_list([])
            return
        ref = self.ctx.watched_ref(self.resource)
        self.spawn(
            list_and_watch(self.ctx.ports.kube, ref, self._namespace, self._selectors, self.clock, self.logger,
                           self._on_list, self._on_event, self.watch_state),
            "watch",
        )

    def _safe_apply(self, obj: JSON) -> tuple[bool, bool]:
        """(changed, existed before); hostile objects are skipped and logged."""
        try:
            existed = obj in self.store
            return self.store.apply(obj), existed
        except (StoreError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self.skipped += 1
            self.logger.warning("skipping %s %s: %s", self.resource, describe(obj), exc)
            return False, False

    def _note_selection(self, obj: JSON) -> None:
        """Says once (per object) that an object is left out because it fails the field selector."""
        try:
            selected = self.store.matches_selector(obj)
        except (ValueError, TypeError, KeyError, AttributeError):
            return  # a malformed object: _safe_apply names it
        name = describe(obj)
        if selected:
            self._unselected.discard(name)
        elif name not in self._unselected:
            self._unselected.add(name)
            self.logger.info("skipping %s %s: does not match the field selector", self.resource, name)

    def _outside(self, obj: JSON) -> bool:
        """In a namespace the ``namespaceSelector`` does not pick (cluster-scoped objects never are)."""
        if self.namespaces is None:
            return False
        meta = obj.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        return bool(namespace) and namespace not in self.namespaces

    def _on_list(self, items: list[JSON]) -> None:
        before = len(self.store)
        good: list[JSON] = []
        for obj in items:
            if self._outside(obj):
                continue
            self._note_selection(obj)
            try:
                self.store.prepare(obj)
                self.store.index_keys(obj)
                identity_of(obj)
                good.append(obj)
            except (StoreError, ValueError, TypeError, KeyError, AttributeError) as exc:
                self.skipped += 1
                self.logger.warning("skipping %s %s: %s", self.resource, describe(obj), exc)
        changed = self.store.replace_all(good)
        if not self.synced.is_set():
            self.synced.set()
            self.bus.publish(ResourceSyncComplete(resource_type=self.resource, initial_count=len(self.store)))
        elif changed:
            # A re-list (after 410) that found differences.
            self._count(max(0, len(self.store) - before), 1, max(0, before - len(self.store)))

    def _on_event(self, etype: str, obj: JSON) -> None:
        if etype == "DELETED" or self._outside(obj):
            try:
                if self.store.remove(obj):
                    self._count(0, 0, 1)
            except StoreError as exc:
                self.logger.warning("skipping deletion of %s %s: %s", self.resource, describe(obj), exc)
            return
        self._note_selection(obj)
        existed_before = False
        with contextlib.suppress(StoreError):
            existed_before = obj in self.store
        changed, _ = self._safe_apply(obj)
        if changed:
            present = obj in self.store
            if not present:
                self._count(0, 0, 1)  # stopped matching the field selector
            elif existed_before:
                self._count(0, 1, 0)
            else:
                self._count(1, 0, 0)

    def _count(self, created: int, modified: int, deleted: int) -> None:
        self._counts[0] += created
        self._counts[1] += modified
        self._counts[2] += deleted
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        created, modified, deleted = self._counts
        self._counts = [0, 0, 0]
        if created or modified or deleted:
            self.bus.publish(ResourceIndexUpdated(resource_type=self.resource, created=created, modified=modified,
                                                  deleted=deleted))
