"""``InProcessKubeClient``: the ``KubeAPI`` port served straight from a ``FakeKubeAPI`` (no sockets).

Every call passes through the fault gate (latency, outages, throttling, injected conflicts) and hands
out copies, so callers may mutate what they get.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from haptic.k8s.api import JSON, ApiError, ObjectList, PatchType, ResourceRef, Selectors, WatchEvent, WatchOptions

from .patching import json_copy
from .resources import ResourceType
from .store import FakeKubeAPI


class InProcessKubeClient:
    """Implements ``haptic.k8s.api.KubeAPI`` against a ``FakeKubeAPI`` in the same event loop."""

    def __init__(self, api: FakeKubeAPI, field_manager: str | None = None) -> None:
        self.api = api
        self.field_manager = field_manager

    def _resolve(self, ref: ResourceRef) -> ResourceType:
        return self.api.resolve(ref.api_version, ref.plural)

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON:
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("get", rt)
        obj: JSON = json_copy(self.api.get(rt, namespace, name))
        return obj

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        selectors: Selectors | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("list", rt)
        selectors = selectors or Selectors()
        result = self.api.list(rt, namespace, selectors.label_selector, selectors.field_selector, limit,
                               continue_token)
        return ObjectList([json_copy(o) for o in result.items], result.resource_version, result.continue_token)

    async def watch(
        self, ref: ResourceRef, namespace: str | None = None, options: WatchOptions | None = None
    ) -> AsyncIterator[WatchEvent]:
        """Events strictly after ``options.resource_version`` (the current objects as ADDED when unset).
        A 410 arrives as an ``ERROR`` event; a dropped stream or a timeout simply ends the iteration."""
        options = options or WatchOptions()
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("watch", rt)
        stream = self.api.watch(
            rt, namespace, options.selectors.label_selector, options.selectors.field_selector,
            options.resource_version, options.timeout_seconds, options.allow_bookmarks,
        )
        try:
            while batch := await stream.next_batch():
                for etype, obj in batch:
                    yield WatchEvent(etype, json_copy(obj))  # type: ignore[arg-type]
        finally:
            stream.close()

    async def create(self, ref: ResourceRef, obj: JSON, namespace: str | None = None) -> JSON:
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("create", rt)
        created: JSON = json_copy(self.api.create(rt, namespace, obj, self.field_manager))
        return created

    async def replace(self, ref: ResourceRef, obj: JSON) -> JSON:
        return await self._replace(ref, obj, None)

    async def replace_status(self, ref: ResourceRef, obj: JSON) -> JSON:
        return await self._replace(ref, obj, "status")

    async def _replace(self, ref: ResourceRef, obj: JSON, subresource: str | None) -> JSON:
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("update", rt)
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise ApiError(400, "BadRequest", f"replace of a {rt.kind} needs metadata.name")
        updated: JSON = json_copy(self.api.update(rt, meta.get("namespace"), name, obj, subresource,
                                                  self.field_manager))
        return updated

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
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("patch", rt)
        patched: JSON = json_copy(self.api.patch(rt, namespace, name, patch_type, body, subresource,
                                                 field_manager or self.field_manager, force))
        return patched

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON | None:
        """Returns the object while finalizers keep it (``deletionTimestamp`` set), None once it is gone."""
        rt = self._resolve(ref)
        if not self.api.faults.quiet():
            await self.api.faults.gate("delete", rt)
        obj, gone = self.api.delete(rt, namespace, name)
        return None if gone else json_copy(obj)
