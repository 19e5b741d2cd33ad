"""Async client for the HAProxy Dataplane API v3 (the subset HAPTIC uses).

Basic auth on every request, an HTTP timeout, typed errors per status, connection retries with
backoff through an injectable ``sleep`` (so virtual time works), and bounded 409/406 retries that
re-read the configuration version. The transport is injectable: the simulator hands in an
``httpx.ASGITransport`` to reach its fake in-process, without sockets.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from haptic.core.control_characters import has_control_characters
from haptic.core.logging import TRACE, get_logger
from haptic.core.tls import default_ssl_context
from haptic.dataplane.api_errors import (
    AlreadyExistsError,
    AuthenticationError,
    DataplaneConnectionError,
    DataplaneHTTPError,
    NotFoundError,
    ReferencedFileError,
    ReloadFailedError,
    ReloadTimeoutError,
    TooManyTransactionsError,
    ValidationError,
    VersionConflictError,
)
from haptic.dataplane.request_building import build_request, parsed_url, url_with_query

T = TypeVar("T")
SleepFn = Callable[[float], Awaitable[None]]
ClockFn = Callable[[], float]

_CONFIG = "/services/haproxy/configuration"
_STORAGE = "/services/haproxy/storage"
_RUNTIME_MAPS = "/services/haproxy/runtime/maps"
_RUNTIME_BACKENDS = "/services/haproxy/runtime/backends"

STORAGE_MAPS = "maps"
STORAGE_GENERAL = "general"
STORAGE_SSL = "ssl_certificates"

# The API's pattern for map names and entry ids in a path (its v3 specification, runtime maps):
# other values cannot be addressed at all, whatever the encoding.
_PATH_VALUE = re.compile(r'^[^\r\n<>*;$#&{}"]+$')

_log = get_logger("haptic.dataplane.client")


def addressable(value: str) -> bool:
    """Whether the API accepts ``value`` as a map name or entry id in a URL path."""
    return bool(_PATH_VALUE.match(value)) and not has_control_characters(value)


def _segment(value: str) -> str:
    """One path segment, percent-encoded (``/`` included) as the API's router decodes it."""
    return quote(value, safe="")


@dataclass(frozen=True)
class RetryPolicy:
    """Connection retries (exponential backoff) and version-conflict retries (immediate)."""

    connect_attempts: int = 3
    backoff_initial: float = 0.1
    backoff_factor: float = 2.0
    conflict_retries: int = 3


@dataclass
class ClientStats:
    """What the client did, for the sync result and for metrics."""

    requests: int = 0
    connection_retries: int = 0
    conflict_retries: int = 0


@dataclass(frozen=True)
class ApiInfo:
    version: str
    major: int
    minor: int
    enterprise: bool
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class RawConfig:
    text: str
    version: int


@dataclass(frozen=True)
class WriteOutcome:
    """A write's answer: its status, the ``Reload-ID`` when it scheduled a reload, the new version."""

    status: int
    reload_id: str | None = None
    version: int | None = None

    @property
    def reload_scheduled(self) -> bool:
        return self.reload_id is not None or self.status == 202


@dataclass(frozen=True)
class Transaction:
    id: str
    version: int
    status: str


@dataclass(frozen=True)
class ReloadStatus:
    id: str
    status: str
    response: str = ""


@dataclass(frozen=True)
class StorageFile:
    storage_name: str
    file: str
    description: str = ""


@dataclass(frozen=True)
class MapEntry:
    key: str
    value: str


@dataclass(frozen=True)
class Versioned:
    """The result of a write retried on version conflicts."""

    outcome: WriteOutcome
    version: int
    retries: int


@dataclass(frozen=True)
class TransactionOutcome:
    outcome: WriteOutcome
    transaction_id: str
    version: int
    retries: int


def _api_base(base_url: str) -> str:
    base = base_url.rstrip("/")
    for suffix in ("/v3", "/v2"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base + "/v3"


def _error_message(response: httpx.Response) -> str:
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text[:500] or response.reason_phrase
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return text[:500]


def _header_int(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def _parse_api_version(raw: Mapping[str, Any]) -> ApiInfo:
    api = raw.get("api")
    version = str(api.get("version", "")) if isinstance(api, Mapping) else ""
    first = version.split()[0] if version.split() else ""
    numbers = first.lstrip("v").split("-")[0].split(".")
    try:
        major, minor = int(numbers[0]), int(numbers[1].split("r")[0])
    except (IndexError, ValueError) as exc:
        raise DataplaneHTTPError("GET", "/info", 200, f"unparseable api.version {version!r}") from exc
    enterprise = "-ee" in first or "r" in numbers[1] or "enterprise" in version.lower()
    return ApiInfo(version=first.lstrip("v"), major=major, minor=minor, enterprise=enterprise, raw=raw)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, handed only the responses that set cookies: httpx hands it every response, and the
    urllib request/response adapters it builds for one were a quarter of a runtime server update's client-side
    CPU (the Dataplane API sets none)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class _Client(httpx.AsyncClient):
    """``httpx.AsyncClient`` with ``_Cookies`` for its one jar (httpx keeps it in ``_cookies``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cookies = _Cookies(self._cookies)


class DataplaneClient:
    """One Dataplane API endpoint. Use as an async context manager or call ``aclose()``."""

    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        sleep: SleepFn | None = None,
        clock: ClockFn | None = None,
        write_guard: Callable[[str, str], None] | None = None,
    ) -> None:
        self.base_url = _api_base(base_url)
        #: Called with (method, path) before every request that is not a GET (each attempt); raises
        #: (``FencedError``) to stop a write, e.g. when the caller no longer leads.
        self.write_guard = write_guard
        self.username = username
        self.retry = retry or RetryPolicy()
        self.stats = ClientStats()
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._clock = clock
        # The base URL given parsed (with the trailing slash httpx would add): httpx would parse it twice, for
        # each client (one per pod and synchronization); only ``http``'s relative URLs use it, ours are absolute.
        self._http = _Client(
            base_url=parsed_url(self.base_url + "/"),
            auth=httpx.BasicAuth(username, password),
            timeout=httpx.Timeout(timeout),
            transport=transport,
            verify=default_ssl_context(),
        )

    def __repr__(self) -> str:
        return f"DataplaneClient({self.base_url!r}, user={self.username!r})"

    async def __aenter__(self) -> DataplaneClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    def now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    # -- plumbing -------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        expected: tuple[int, ...],
        params: Mapping[str, str | int] | None = None,
        content: bytes | None = None,
        content_type: str | None = None,
        json_body: Any = None,
        files: Mapping[str, tuple[str, bytes]] | None = None,
        data: Mapping[str, str] | None = None,
        conflict: type[DataplaneHTTPError] = VersionConflictError,
    ) -> httpx.Response:
        delay = self.retry.backoff_initial
        attempt = 0
        # The absolute URL as httpx merges base URL, path and parameters (our paths have one leading slash).
        url = url_with_query(self.base_url + path, params)
        while True:
            attempt += 1
            if self.write_guard is not None and method != "GET":
                self.write_guard(method, path)
            self.stats.requests += 1
            started = self.now()
            try:
                request = build_request(self._http, method, url, content=content, content_type=content_type,
                                        json_body=json_body, files=files, data=data)
                response = await self._http.send(request)
                break
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                # Writes may have been applied if the request went out: only connect failures, or
                # any failure of a read, are safe to repeat.
                repeatable = method == "GET" or isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if not repeatable or attempt >= self.retry.connect_attempts:
                    raise DataplaneConnectionError(f"{method} {self.base_url}{path}: {exc!r}") from exc
                self.stats.connection_retries += 1
                await self.sleep(delay)
                delay *= self.retry.backoff_factor
            except httpx.TimeoutException as exc:
                raise DataplaneConnectionError(f"{method} {self.base_url}{path}: timed out") from exc
        if _log.is_enabled_for(TRACE):
            # What a slow deployment spends its time on (paths and statuses only: never bodies, never headers).
            _log.trace("dataplane request", method=method, path=path, status=response.status_code,
                       ms=round((self.now() - started) * 1000, 1), base=self.base_url)
        if response.status_code in expected:
            return response
        raise self._error(method, path, response, conflict)

    @staticmethod
    def _error(
        method: str, path: str, response: httpx.Response, conflict: type[DataplaneHTTPError]
    ) -> DataplaneHTTPError:
        status = response.status_code
        message = _error_message(response)
        cls: type[DataplaneHTTPError] = DataplaneHTTPError
        if status == 401:
            cls = AuthenticationError
        elif status == 404:
            cls = NotFoundError
        elif status == 409:
            cls = conflict
        elif status == 406:
            cls = VersionConflictError
        elif status == 429:
            cls = TooManyTransactionsError
        elif status == 400:
            cls = ValidationError
        return cls(method, path, status, message)

    @staticmethod
    def _outcome(response: httpx.Response) -> WriteOutcome:
        return WriteOutcome(
            status=response.status_code,
            reload_id=response.headers.get("Reload-ID") or None,
            version=_header_int(response, "Configuration-Version"),
        )

    # -- info and configuration -----------------------------------------------------------------

    async def info(self) -> ApiInfo:
        response = await self._request("GET", "/info", expected=(200,))
        body = response.json()
        if not isinstance(body, dict):
            raise DataplaneHTTPError("GET", "/info", 200, "body is not a JSON object")
        return _parse_api_version(body)

    async def get_version(self, transaction_id: str | None = None) -> int:
        params = {"transaction_id": transaction_id} if transaction_id else None
        response = await self._request("GET", f"{_CONFIG}/version", expected=(200,), params=params)
        try:
            return int(response.text.strip())
        except ValueError as exc:
            raise DataplaneHTTPError("GET", f"{_CONFIG}/version", 200, f"not an integer: {response.text!r}") from exc

    async def get_raw_config(self) -> RawConfig:
        response = await self._request("GET", f"{_CONFIG}/raw", expected=(200,))
        text = response.text
        version = _header_int(response, "Configuration-Version")
        if version is None:
            version = 1
            first = text.split("\n", 1)[0].strip()
            if first.startswith("# _version="):
                version = int(first.removeprefix("# _version="))
        return RawConfig(text=text, version=version)

    async def post_raw_config(self, text: str, version: int, *, skip_reload: bool = False) -> WriteOutcome:
        """Replaces the whole configuration; 202 + Reload-ID. 409 when ``version`` is stale.
        ``skip_reload``: the file only (201, no reload), for a change haproxy already runs."""
        params: dict[str, str | int] = {"version": version}
        if skip_reload:
            params["skip_reload"] = "true"
        response = await self._request(
            "POST",
            f"{_CONFIG}/raw",
            expected=(200, 201, 202),
            params=params,
            content=text.encode(),
            content_type="text/plain",
        )
        return self._outcome(response)

    async def with_version(
        self, write: Callable[[int], Awaitable[WriteOutcome]], version: int | None = None
    ) -> Versioned:
        """Runs ``write(version)``; on 409/406 re-reads the version and retries (bounded)."""
        retries = 0
        current = version if version is not None else await self.get_version()
        while True:
            try:
                outcome = await write(current)
            except VersionConflictError:
                if retries >= self.retry.conflict_retries:
                    raise
                retries += 1
                self.stats.conflict_retries += 1
                current = await self.get_version()
                continue
            return Versioned(outcome=outcome, version=current, retries=retries)

    # -- servers --------------------------------------------------------------------------------

    async def get_server(self, backend: str, name: str) -> dict[str, Any]:
        path = f"{_CONFIG}/backends/{_segment(backend)}/servers/{_segment(name)}"
        response = await self._request("GET", path, expected=(200,))
        body = response.json()
        return dict(body) if isinstance(body, dict) else {}

    async def replace_server(
        self,
        backend: str,
        name: str,
        model: Mapping[str, Any],
        *,
        version: int | None = None,
        transaction_id: str | None = None,
    ) -> WriteOutcome:
        """200: applied through the runtime API, no reload. 202 + Reload-ID: a reload is scheduled."""
        if (version is None) == (transaction_id is None):
            raise ValueError("replace_server needs exactly one of version and transaction_id")
        params: dict[str, str | int] = (
            {"version": version} if version is not None else {"transaction_id": str(transaction_id)}
        )
        response = await self._request(
            "PUT",
            f"{_CONFIG}/backends/{_segment(backend)}/servers/{_segment(name)}",
            expected=(200, 202),
            params=params,
            json_body=dict(model),
        )
        return self._outcome(response)

    async def create_server(self, backend: str, model: Mapping[str, Any], *, transaction_id: str) -> WriteOutcome:
        """A new server in ``backend``, inside a transaction (202: staged; 201 where an API applies it at once)."""
        response = await self._request(
            "POST", f"{_CONFIG}/backends/{_segment(backend)}/servers", expected=(201, 202),
            params={"transaction_id": transaction_id}, json_body=dict(model))
        return self._outcome(response)

    async def add_runtime_server(self, backend: str, model: Mapping[str, Any]) -> None:
        """``add server`` on the running haproxy (201), the config file untouched: a RuntimeAddServer model."""
        await self._request("POST", f"{_RUNTIME_BACKENDS}/{_segment(backend)}/servers", expected=(201,),
                            json_body=dict(model))

    async def delete_server(self, backend: str, name: str, *, transaction_id: str) -> WriteOutcome:
        """Removes a server from ``backend``, inside a transaction (202: staged; 204 where applied at once)."""
        response = await self._request(
            "DELETE", f"{_CONFIG}/backends/{_segment(backend)}/servers/{_segment(name)}", expected=(202, 204),
            params={"transaction_id": transaction_id})
        return self._outcome(response)

    # -- transactions ---------------------------------------------------------------------------

    async def start_transaction(self, version: int) -> Transaction:
        response = await self._request(
            "POST", "/services/haproxy/transactions", expected=(201,), params={"version": version}
        )
        body = response.json()
        return Transaction(id=str(body["id"]), version=int(body.get("_version", version)), status=str(body["status"]))

    async def commit_transaction(self, transaction_id: str, *, force_reload: bool = False) -> WriteOutcome:
        response = await self._request(
            "PUT",
            f"/services/haproxy/transactions/{_segment(transaction_id)}",
            expected=(200, 202),
            params={"force_reload": "true" if force_reload else "false"},
        )
        return self._outcome(response)

    async def abort_transaction(self, transaction_id: str) -> None:
        """Deletes the transaction; an unknown id counts as already aborted."""
        try:
            path = f"/services/haproxy/transactions/{_segment(transaction_id)}"
            await self._request("DELETE", path, expected=(204, 200))
        except NotFoundError:
            return

    async def list_transactions(self) -> list[Transaction]:
        response = await self._request("GET", "/services/haproxy/transactions", expected=(200,))
        return [
            Transaction(id=str(t["id"]), version=int(t.get("_version", 0)), status=str(t.get("status", "")))
            for t in response.json()
        ]

    async def run_transaction(self, body: Callable[[str], Awaitable[None]]) -> TransactionOutcome:
        """Start, ``body(transaction_id)``, commit. A 409/406 at start or commit aborts and retries
        with a fresh version (bounded); any other error aborts and propagates."""
        retries = 0
        while True:
            version = await self.get_version()
            try:
                transaction = await self.start_transaction(version)
            except VersionConflictError:
                if retries >= self.retry.conflict_retries:
                    raise
                retries += 1
                self.stats.conflict_retries += 1
                continue
            try:
                await body(transaction.id)
                outcome = await self.commit_transaction(transaction.id)
            except VersionConflictError:
                await self._abort_quietly(transaction.id)
                if retries >= self.retry.conflict_retries:
                    raise
                retries += 1
                self.stats.conflict_retries += 1
                continue
            except BaseException:
                await self._abort_quietly(transaction.id)
                raise
            return TransactionOutcome(outcome=outcome, transaction_id=transaction.id, version=version, retries=retries)

    async def _abort_quietly(self, transaction_id: str) -> None:
        try:
            await asyncio.shield(self.abort_transaction(transaction_id))
        except Exception:
            return

    # -- reloads --------------------------------------------------------------------------------

    async def get_reload(self, reload_id: str) -> ReloadStatus:
        response = await self._request("GET", f"/services/haproxy/reloads/{_segment(reload_id)}", expected=(200,))
        body = response.json()
        return ReloadStatus(
            id=str(body.get("id", reload_id)), status=str(body["status"]), response=str(body.get("response", ""))
        )

    async def wait_for_reload(self, reload_id: str, *, within: float = 10.0, interval: float = 0.5) -> ReloadStatus:
        """Polls until ``succeeded`` (returned) or ``failed`` (raises); 404 and transient errors keep polling."""
        deadline = self.now() + within
        while True:
            try:
                status = await self.get_reload(reload_id)
            except (NotFoundError, DataplaneConnectionError):
                status = ReloadStatus(id=reload_id, status="unknown")
            except DataplaneHTTPError as exc:
                if exc.status < 500:
                    raise
                status = ReloadStatus(id=reload_id, status="unknown")
            if status.status == "succeeded":
                return status
            if status.status == "failed":
                raise ReloadFailedError(reload_id, status.response)
            if self.now() + interval > deadline:
                raise ReloadTimeoutError(reload_id, within)
            await self.sleep(interval)

    # -- storage --------------------------------------------------------------------------------

    async def list_storage(self, kind: str) -> list[StorageFile]:
        response = await self._request("GET", f"{_STORAGE}/{kind}", expected=(200,))
        files = []
        for item in response.json() or []:
            name = str(item.get("storage_name") or item.get("id") or "")
            files.append(
                StorageFile(
                    storage_name=name, file=str(item.get("file", "")), description=str(item.get("description", ""))
                )
            )
        return files

    async def get_storage_content(self, kind: str, name: str) -> str:
        """The file's content (maps, general files); for SSL certificates the JSON metadata text."""
        response = await self._request("GET", f"{_STORAGE}/{kind}/{_segment(name)}", expected=(200,))
        return response.text

    async def get_certificate_info(self, name: str) -> dict[str, Any]:
        response = await self._request("GET", f"{_STORAGE}/{STORAGE_SSL}/{_segment(name)}", expected=(200,))
        body = response.json()
        return dict(body) if isinstance(body, dict) else {}

    async def create_storage_file(self, kind: str, name: str, content: str) -> WriteOutcome:
        """Multipart ``file_upload``; 201 (no reload) or, for certificates, 202 + Reload-ID."""
        data = {"id": name} if kind == STORAGE_GENERAL else None
        response = await self._request(
            "POST",
            f"{_STORAGE}/{kind}",
            expected=(200, 201, 202),
            files={"file_upload": (name, content.encode())},
            data=data,
            conflict=AlreadyExistsError,
        )
        return self._outcome(response)

    async def replace_storage_file(self, kind: str, name: str, content: str) -> WriteOutcome:
        """Maps and certificates take ``text/plain``, general files multipart. 200 or 202 + Reload-ID."""
        path = f"{_STORAGE}/{kind}/{_segment(name)}"
        if kind == STORAGE_GENERAL:
            response = await self._request(
                "PUT", path, expected=(200, 202), files={"file_upload": (name, content.encode())}
            )
        else:
            response = await self._request(
                "PUT", path, expected=(200, 202), content=content.encode(), content_type="text/plain"
            )
        return self._outcome(response)

    async def delete_storage_file(self, kind: str, name: str) -> WriteOutcome:
        """204 (or 202 for certificates); 409 while the running configuration references the file."""
        response = await self._request(
            "DELETE", f"{_STORAGE}/{kind}/{_segment(name)}", expected=(200, 202, 204), conflict=ReferencedFileError
        )
        return self._outcome(response)

    # -- runtime maps ---------------------------------------------------------------------------

    async def runtime_map_names(self) -> set[str]:
        """Storage names of the maps haproxy loaded from the maps directory: the only ones the
        runtime map API can edit (the API addresses a map as ``<maps_dir>/<name>``)."""
        response = await self._request("GET", _RUNTIME_MAPS, expected=(200,))
        return {str(m["storage_name"]) for m in response.json() or [] if isinstance(m, dict) and m.get("storage_name")}

    async def haproxy_up(self) -> bool | None:
        """``/health``'s view of haproxy: True up, False down, None when the API does not say."""
        try:
            response = await self._request("GET", "/health", expected=(200,))
        except NotFoundError:
            return None
        status = response.json().get("haproxy") if isinstance(response.json(), dict) else None
        return None if status not in ("up", "down") else status == "up"

    async def list_map_entries(self, map_name: str) -> list[MapEntry]:
        response = await self._request("GET", f"{_RUNTIME_MAPS}/{_segment(map_name)}/entries", expected=(200,))
        return [MapEntry(key=str(e["key"]), value=str(e.get("value", ""))) for e in response.json() or []]

    async def add_map_entry(self, map_name: str, key: str, value: str, *, force_sync: bool = True) -> None:
        await self._request(
            "POST",
            f"{_RUNTIME_MAPS}/{_segment(map_name)}/entries",
            expected=(201, 200),
            params={"force_sync": _bool(force_sync)},
            json_body={"key": key, "value": value},
            conflict=AlreadyExistsError,
        )

    async def replace_map_entry(self, map_name: str, key: str, value: str, *, force_sync: bool = True) -> None:
        await self._request(
            "PUT",
            f"{_RUNTIME_MAPS}/{_segment(map_name)}/entries/{_segment(key)}",
            expected=(200,),
            params={"force_sync": _bool(force_sync)},
            json_body={"value": value},
        )

    async def delete_map_entry(self, map_name: str, key: str, *, force_sync: bool = True) -> None:
        await self._request(
            "DELETE",
            f"{_RUNTIME_MAPS}/{_segment(map_name)}/entries/{_segment(key)}",
            expected=(204, 200),
            params={"force_sync": _bool(force_sync)},
        )


def _bool(value: bool) -> str:
    return "true" if value else "false"


__all__ = [
    "STORAGE_GENERAL",
    "STORAGE_MAPS",
    "STORAGE_SSL",
    "ApiInfo",
    "ClientStats",
    "DataplaneClient",
    "MapEntry",
    "RawConfig",
    "ReloadStatus",
    "RetryPolicy",
    "StorageFile",
    "Transaction",
    "TransactionOutcome",
    "Versioned",
    "WriteOutcome",
]
