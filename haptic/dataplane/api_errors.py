"""Errors raised by the Dataplane API client and the synchronizer.

Messages name the method, path and status; they never carry credentials.
"""

from __future__ import annotations


class DataplaneError(Exception):
    """Base class of every Dataplane client and sync error."""


class DataplaneConnectionError(DataplaneError):
    """The API could not be reached (after the connection retries)."""


class DataplaneHTTPError(DataplaneError):
    """The API answered with an unexpected status."""

    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        super().__init__(f"{method} {path}: HTTP {status}: {message}")


class AuthenticationError(DataplaneHTTPError):
    """401: the credentials were refused."""


class NotFoundError(DataplaneHTTPError):
    """404: the object (file, server, transaction, reload) does not exist."""


class AlreadyExistsError(DataplaneHTTPError):
    """409 on a create: the object already exists."""


class ReferencedFileError(DataplaneHTTPError):
    """409 on a storage delete: the running configuration still references the file."""


class VersionConflictError(DataplaneHTTPError):
    """409 (version mismatch) or 406 (outdated transaction); retried with a fresh version."""


class TooManyTransactionsError(DataplaneHTTPError):
    """429: the API refuses to open another transaction."""


class ValidationError(DataplaneHTTPError):
    """400: the API rejected the request body (for a config: it failed validation)."""


class ReloadFailedError(DataplaneError):
    """A reload finished with status ``failed``; the API kept its previous configuration."""

    def __init__(self, reload_id: str, response: str) -> None:
        self.reload_id = reload_id
        self.response = response
        super().__init__(f"reload {reload_id} failed: {response}")


class ReloadTimeoutError(DataplaneError):
    """A reload did not finish within the verification timeout."""

    def __init__(self, reload_id: str, timeout: float) -> None:
        self.reload_id = reload_id
        self.timeout = timeout
        super().__init__(f"reload {reload_id} not finished after {timeout:g}s")


class FencedError(DataplaneError):
    """A write refused before it was sent: this replica cannot prove it still leads (fencing)."""
