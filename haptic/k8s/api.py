"""The ``KubeAPI`` port: everything the controller asks of a Kubernetes API server.

Three adapters implement it: ``haptic.live`` (the official client against a real cluster),
``simulator.kube`` in-process (deterministic, no sockets) and, through ``haptic.live``, the
simulator's HTTP server. Objects are plain JSON-shaped dicts, exactly as the API serves them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

JSON = dict[str, Any]
PatchType = Literal["merge", "json", "strategic", "apply"]
WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


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


class ApiError(Exception):
    """An error answer from the API, carrying the Kubernetes ``Status`` fields."""

    def __init__(self, code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.retry_after: float | None = None

    def status(self) -> JSON:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": self.details,
            "code": self.code,
        }

    @classmethod
    def from_status(cls, body: Mapping[str, Any], code: int | None = None) -> ApiError:
        """Builds the most specific subclass for a ``Status`` body."""
        status_code = int(body.get("code") or code or 500)
        reason = str(body.get("reason") or "")
        message = str(body.get("message") or "")
        details = body.get("details") or {}
        klass = _BY_CODE.get(status_code, ApiError)
        if klass is ApiError:
            return ApiError(status_code, reason or "InternalError", message, details)
        err: ApiError = klass(message, details)
        if reason:
            err.reason = reason
        return err


class NotFound(ApiError):
    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(404, "NotFound", message, details)


class Conflict(ApiError):
    """409: a stale resourceVersion, an existing name (reason ``AlreadyExists``) or an apply conflict."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None, reason: str = "Conflict") -> None:
        super().__init__(409, reason, message, details)


class Gone(ApiError):
    """410: the requested resourceVersion or continue token was compacted; re-list."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(410, "Expired", message, details)


class Invalid(ApiError):
    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(422, "Invalid", message, details)


class Unavailable(ApiError):
    """503, 429 or a refused connection: the API could not be reached; retry later."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None, code: int = 503) -> None:
        super().__init__(code, "ServiceUnavailable" if code == 503 else "TooManyRequests", message, details)


_BY_CODE: dict[int, type[Any]] = {404: NotFound, 409: Conflict, 410: Gone, 422: Invalid, 503: Unavailable}


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
