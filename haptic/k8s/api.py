"""The ``KubeAPI`` port: everything the controller asks of a Kubernetes API server.

Three adapters implement it: ``haptic.live`` (the official client against a real cluster),
``simulator.kube`` in-process (deterministic, no sockets) and, through ``haptic.live``, the
simulator's HTTP server. Objects are plain JSON-shaped dicts, exactly as the API serves them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from haptic.k8s.errors import ApiError as ApiError
from haptic.k8s.errors import Conflict as Conflict
from haptic.k8s.errors import Gone as Gone
from haptic.k8s.errors import Invalid as Invalid
from haptic.k8s.errors import NotFound as NotFound
from haptic.k8s.errors import Unavailable as Unavailable

JSON = dict[str, Any]
PatchType = Literal["merge", "json", "strategic", "apply"]
WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


def default_plural(kind: str) -> str:
    """The resource name of a kind, as the API server's default RESTMapper guesses it."""
    lower = kind.lower()
    return lower + ("es" if lower.endswith(("s", "x", "ch", "sh")) else "s")


@dataclass(frozen=True, order=True)
class ResourceRef:
    """A resource type as the API addresses it: ``apiVersion`` plus plural, and its scope."""

    api_version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def __str__(self) -> str:
        return f"{self.api_version}/{self.plural}"


@dataclass(frozen=True)
class ObjectList:
    """A (possibly partial) list answer: items plus the list's resourceVersion and continue token."""

    items: list[JSON]
    resource_version: str
    continue_token: str | None = None


@dataclass(frozen=True)
class WatchEvent:
    """One watch event. For ``ERROR`` the object is a Kubernetes ``Status`` (410 means re-list)."""

    type: WatchEventType
    object: JSON


@dataclass(frozen=True)
class Selectors:
    """Server-side selectors in the API's own string syntax (``a=b,c!=d``, ``metadata.name=x``)."""

    label_selector: str | None = None
    field_selector: str | None = None




@dataclass
class WatchOptions:
    resource_version: str | None = None
    timeout_seconds: float | None = None
    allow_bookmarks: bool = True
    selectors: Selectors = field(default_factory=Selectors)


@runtime_checkable
class KubeAPI(Protocol):
    """The operations the controller needs. ``namespace=None`` on a namespaced type means all namespaces."""

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON: ...

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        selectors: Selectors | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList: ...

    def watch(
        self, ref: ResourceRef, namespace: str | None = None, options: WatchOptions | None = None
    ) -> AsyncIterator[WatchEvent]: ...

    async def create(self, ref: ResourceRef, obj: JSON, namespace: str | None = None) -> JSON: ...

    async def replace(self, ref: ResourceRef, obj: JSON) -> JSON: ...

    async def replace_status(self, ref: ResourceRef, obj: JSON) -> JSON: ...

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
    ) -> JSON: ...

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON | None: ...
