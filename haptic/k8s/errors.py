"""Every error ``haptic.k8s`` raises, under one base, ``K8sError``.

``ApiError`` and its subclasses are the answers of the ``KubeAPI`` port (a Kubernetes ``Status``);
the others are bad input to the pure helpers (JSONPath, selectors, store lookups) and stay
``ValueError`` too. The modules that raise them re-export them (``haptic.k8s.api.ApiError`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "AmbiguousLookupError",
    "ApiError",
    "Conflict",
    "Gone",
    "Invalid",
    "JSONPathError",
    "K8sError",
    "NotFound",
    "SelectorError",
    "StoreError",
    "Unavailable",
]


class K8sError(Exception):
    """Base of every error of ``haptic.k8s``."""


class ApiError(K8sError):
    """An error answer from the API, carrying the Kubernetes ``Status`` fields."""

    def __init__(self, code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.retry_after: float | None = None

    def status(self) -> dict[str, Any]:
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


class JSONPathError(K8sError, ValueError):
    """A JSONPath expression that cannot be parsed (or used the way it was asked to be used)."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(f"invalid JSONPath {expression!r}: {reason}")
        self.expression = expression
        self.reason = reason


class SelectorError(K8sError, ValueError):
    """A selector string (or object) that the API would reject, with the offending part named."""

    def __init__(self, selector: str, reason: str) -> None:
        super().__init__(f"invalid selector {selector!r}: {reason}")
        self.selector = selector
        self.reason = reason


class StoreError(K8sError, ValueError):
    """A lookup the store cannot answer as asked (too many keys, an ambiguous single lookup, a nameless object)."""


class AmbiguousLookupError(StoreError):
    """``get_single`` found more than one object."""
