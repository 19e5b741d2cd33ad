"""A minimal in-memory ``KubeAPI`` for the elector tests (get/create/replace with resourceVersions).

Stand-in until branch ``kube``'s in-process fake is merged. Every call yields to the loop once, so
concurrent candidates interleave deterministically and really race for the same resourceVersion.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from haptic.k8s.api import (
    JSON,
    ApiError,
    Conflict,
    NotFound,
    ObjectList,
    PatchType,
    ResourceRef,
    Selectors,
    Unavailable,
    WatchEvent,
    WatchOptions,
)


@dataclass
class CallLog:
    conflicts: int = 0
    calls: list[tuple[str, str]] = field(default_factory=list)


class MemKube:
    """One object store with a global resourceVersion counter."""

    def __init__(self, watchable: bool = False) -> None:
        self.objects: dict[tuple[str, str | None, str], JSON] = {}
        self.rv = 0
        self.log = CallLog()
        self.watchable = watchable
        self.watchers: list[tuple[tuple[str, str | None, str], asyncio.Queue[WatchEvent]]] = []

    def notify(self, key: tuple[str, str | None, str], kind: str, obj: JSON) -> None:
        for wanted, queue in self.watchers:
            if wanted == key:
                queue.put_nowait(WatchEvent(kind, copy.deepcopy(obj)))  # type: ignore[arg-type]

    def touch(self, key: tuple[str, str | None, str], spec: JSON) -> None:
        """An out-of-band write (another client), with a new resourceVersion and a watch event."""
        self.rv += 1
        obj = self.objects[key]
        obj["spec"] = spec
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.notify(key, "MODIFIED", obj)

    def _key(self, ref: ResourceRef, name: str, namespace: str | None) -> tuple[str, str | None, str]:
        return (str(ref), namespace if ref.namespaced else None, name)

    def client(self, who: str = "") -> MemKubeClient:
        return MemKubeClient(self, who)


class MemKubeClient:
    """One caller's view of the store; ``partitioned`` makes every call fail as if the API were down."""

    def __init__(self, store: MemKube, who: str) -> None:
        self.store = store
        self.who = who
        self.partitioned = False

    async def _enter(self, op: str) -> None:
        await asyncio.sleep(0)
        self.store.log.calls.append((self.who, op))
        if self.partitioned:
            raise Unavailable(f"{self.who}: API unreachable (partitioned)")

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON:
        await self._enter("get")
        obj = self.store.objects.get(self.store._key(ref, name, namespace))
        if obj is None:
            raise NotFound(f'{ref.plural} "{name}" not found')
        return copy.deepcopy(obj)

    async def create(self, ref: ResourceRef, obj: JSON, namespace: str | None = None) -> JSON:
        await self._enter("create")
        meta = obj.get("metadata") or {}
        key = self.store._key(ref, meta["name"], namespace or meta.get("namespace"))
        if key in self.store.objects:
            self.store.log.conflicts += 1
            raise Conflict(f'{ref.plural} "{meta["name"]}" already exists', reason="AlreadyExists")
        self.store.rv += 1
        stored = copy.deepcopy(obj)
        stored["metadata"] = {**meta, "namespace": key[1], "resourceVersion": str(self.store.rv)}
        self.store.objects[key] = stored
        self.store.notify(key, "ADDED", stored)
        return copy.deepcopy(stored)

    async def replace(self, ref: ResourceRef, obj: JSON) -> JSON:
        await self._enter("replace")
        meta = obj.get("metadata") or {}
        key = self.store._key(ref, meta["name"], meta.get("namespace"))
        current = self.store.objects.get(key)
        if current is None:
            raise NotFound(f'{ref.plural} "{meta["name"]}" not found')
        if meta.get("resourceVersion") != current["metadata"]["resourceVersion"]:
            self.store.log.conflicts += 1
            raise Conflict(f'Operation cannot be fulfilled on {ref.plural} "{meta["name"]}": object was modified')
        self.store.rv += 1
        stored = copy.deepcopy(obj)
        stored["metadata"] = {**meta, "resourceVersion": str(self.store.rv)}
        self.store.objects[key] = stored
        self.store.notify(key, "MODIFIED", stored)
        return copy.deepcopy(stored)

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        selectors: Selectors | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        raise ApiError(405, "MethodNotAllowed", "memkube: list is not supported")

    def watch(
        self, ref: ResourceRef, namespace: str | None = None, options: WatchOptions | None = None
    ) -> AsyncIterator[WatchEvent]:
        """Only ``metadata.name=<x>`` watches of live changes (no history, no selectors beyond that)."""
        if not self.store.watchable:
            raise ApiError(405, "MethodNotAllowed", "memkube: watch is not supported")
        field_selector = (options.selectors.field_selector if options else None) or ""
        name = field_selector.removeprefix("metadata.name=")
        return self._watch(self.store._key(ref, name, namespace))

    async def _watch(self, key: tuple[str, str | None, str]) -> AsyncIterator[WatchEvent]:
        queue: asyncio.Queue[WatchEvent] = asyncio.Queue()
        entry = (key, queue)
        self.store.watchers.append(entry)
        try:
            while True:
                event = await queue.get()
                if self.partitioned:
                    raise Unavailable(f"{self.who}: watch stream broken (partitioned)")
                yield event
        finally:
            self.store.watchers.remove(entry)

    async def replace_status(self, ref: ResourceRef, obj: JSON) -> JSON:
        raise ApiError(405, "MethodNotAllowed", "memkube: status is not supported")

    async def patch(
        self,
        ref: ResourceRef,
        name: str,
        body: Any,
        patch_type: PatchType = "merge",
        namespace: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        subresource: str | None = None,
    ) -> JSON:
        raise ApiError(405, "MethodNotAllowed", "memkube: patch is not supported")

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON | None:
        await self._enter("delete")
        return self.store.objects.pop(self.store._key(ref, name, namespace), None)
