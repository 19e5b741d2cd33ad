"""A per-candidate view of a shared ``KubeAPI``: can be cut off (partitioned) and counts 409s.

Every call first yields to the loop once, so candidates started at the same instant interleave their
read-modify-write cycles and really race for the same resourceVersion (the in-process fake answers
without suspending otherwise).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from haptic.k8s.api import (
    JSON,
    Conflict,
    KubeAPI,
    ObjectList,
    PatchType,
    ResourceRef,
    Selectors,
    Unavailable,
    WatchEvent,
    WatchOptions,
)


@dataclass
class ConflictCounter:
    count: int = 0


class CandidateClient:
    def __init__(self, inner: KubeAPI, who: str, conflicts: ConflictCounter | None = None) -> None:
        self.inner = inner
        self.who = who
        self.partitioned = False
        self.conflicts = conflicts or ConflictCounter()

    async def _enter(self) -> None:
        await asyncio.sleep(0)
        if self.partitioned:
            raise Unavailable(f"{self.who}: API unreachable (partitioned)")

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON:
        await self._enter()
        return await self.inner.get(ref, name, namespace)

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        selectors: Selectors | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        await self._enter()
        return await self.inner.list(ref, namespace, selectors, limit, continue_token)

    async def watch(
        self, ref: ResourceRef, namespace: str | None = None, options: WatchOptions | None = None
    ) -> AsyncIterator[WatchEvent]:
        await self._enter()
        async for event in self.inner.watch(ref, namespace, options):
            if self.partitioned:
                raise Unavailable(f"{self.who}: watch stream broken (partitioned)")
            yield event

    async def create(self, ref: ResourceRef, obj: JSON, namespace: str | None = None) -> JSON:
        await self._enter()
        try:
            return await self.inner.create(ref, obj, namespace)
        except Conflict:
            self.conflicts.count += 1
            raise

    async def replace(self, ref: ResourceRef, obj: JSON) -> JSON:
        await self._enter()
        try:
            return await self.inner.replace(ref, obj)
        except Conflict:
            self.conflicts.count += 1
            raise

    async def replace_status(self, ref: ResourceRef, obj: JSON) -> JSON:
        await self._enter()
        return await self.inner.replace_status(ref, obj)

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
        await self._enter()
        return await self.inner.patch(ref, name, body, patch_type, namespace, field_manager, force, subresource)

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON | None:
        await self._enter()
        return await self.inner.delete(ref, name, namespace)
