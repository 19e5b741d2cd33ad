"""``KubeAPI`` against a real API server, on the official ``kubernetes`` client's asyncio API.

Why raw REST calls rather than the generated API classes: the controller addresses resources by
``ResourceRef`` (any group, version and plural, including CRDs known only at run time), while the
generated ``kubernetes.aio`` classes are one method per built-in type, and its ``dynamic`` client adds
a discovery round-trip per type and hides the watch stream. So this adapter uses the client for what
it does well — loading in-cluster or kubeconfig credentials (tokens, refresh hooks, client
certificates, CA bundles) into a ``Configuration`` and its ``ApiClient`` (authentication headers, TLS,
the aiohttp session) — and builds the REST paths itself: ``ApiClient.param_serialize`` +
``call_api`` with the body already JSON, so every patch type and the watch stream are under our
control.

Watch semantics (documented choice): an in-stream ``ERROR`` event is **yielded** as a ``WatchEvent``
of type ``ERROR`` carrying the ``Status`` (for a 410 the caller re-lists), and the stream then ends,
as the port's ``WatchEvent`` docstring describes. Pass ``watch_errors="raise"`` to get the mapped
``ApiError`` (``Gone`` for 410) raised instead. A watch request answered with a non-200 status always
raises the mapped ``ApiError``, and so does a connection that cannot be made (``Unavailable``); a
stream cut once it is flowing (connection lost, read timeout, server timeout) simply ends the
iteration, as in the in-process adapter: the caller re-watches from the last resourceVersion it saw.
``BOOKMARK`` events are yielded as they come.

Errors: every non-2xx answer becomes the most specific ``ApiError`` subclass of ``haptic.k8s.api``
(built from the Kubernetes ``Status`` body); 429 becomes ``Unavailable(code=429)`` with
``retry_after`` taken from the ``Retry-After`` header; connection failures and client timeouts become
``Unavailable``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import aiohttp
from kubernetes.aio import client as k8s_client
from kubernetes.aio import config as k8s_config

from haptic.k8s.api import (
    JSON,
    ApiError,
    ObjectList,
    PatchType,
    ResourceRef,
    Selectors,
    Unavailable,
    WatchEvent,
    WatchOptions,
)

__all__ = ["LiveKubeAPI", "connect", "resource_path"]

_log = logging.getLogger(__name__)

_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
_AUTH = ["BearerToken"]
_Query = list[tuple[str, str]]
# The config loaders are untyped; typed views keep mypy --strict meaningful around them.
_load_kube_config: Any = k8s_config.load_kube_config
_load_incluster_config: Any = k8s_config.load_incluster_config
_WATCH_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"})


def resource_path(
    ref: ResourceRef, namespace: str | None = None, name: str | None = None, subresource: str | None = None
) -> str:
    """The REST path of a collection, an object or an object's subresource."""
    base = f"/api/{ref.version}" if not ref.group else f"/apis/{ref.group}/{ref.version}"
    if ref.namespaced and namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    path = f"{base}/{ref.plural}"
    if name is not None:
        if not name:
            raise ValueError(f"{ref}: empty object name")
        path += f"/{quote(name, safe='')}"
        if subresource:
            path += f"/{subresource}"
    return path


@dataclass(frozen=True)
class _Timeouts:
    request: float = 30.0
    watch_slack: float = 15.0


class LiveKubeAPI:
    """The ``KubeAPI`` port over an ``ApiClient``. Close it with ``await api.close()``."""

    def __init__(
        self,
        api_client: Any,
        request_timeout: float = 30.0,
        watch_errors: Literal["yield", "raise"] = "yield",
    ) -> None:
        self._client = api_client
        self._timeouts = _Timeouts(request=request_timeout)
        self._watch_errors = watch_errors

    @property
    def host(self) -> str:
        return str(self._client.configuration.host)

    def __repr__(self) -> str:
        # Never the Configuration: it holds the bearer token.
        return f"LiveKubeAPI(host={self.host!r})"

    async def close(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> LiveKubeAPI:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    # -- reads ---------------------------------------------------------------------------------

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON:
        return await self._json("GET", resource_path(ref, namespace, name))

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        selectors: Selectors | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ObjectList:
        query = _selector_query(selectors)
        if limit is not None:
            query.append(("limit", str(limit)))
        if continue_token:
            query.append(("continue", continue_token))
        body = await self._json("GET", resource_path(ref, namespace), query=query)
        meta = body.get("metadata") or {}
        kind = ref.kind or str(body.get("kind") or "").removesuffix("List")
        items = []
        for item in body.get("items") or []:
            # The API omits apiVersion/kind on list items; watch events carry them, so align.
            item.setdefault("apiVersion", ref.api_version)
            if kind:
                item.setdefault("kind", kind)
            items.append(item)
        return ObjectList(items, str(meta.get("resourceVersion") or ""), meta.get("continue") or None)

    def watch(
        self, ref: ResourceRef, namespace: str | None = None, options: WatchOptions | None = None
    ) -> AsyncIterator[WatchEvent]:
        return self._watch(ref, namespace, options or WatchOptions())

    async def _watch(self, ref: ResourceRef, namespace: str | None, options: WatchOptions) -> AsyncIterator[WatchEvent]:
        query: list[tuple[str, str]] = [("watch", "true")]
        if options.allow_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if options.resource_version is not None:
            query.append(("resourceVersion", options.resource_version))
        if options.timeout_seconds is not None:
            query.append(("timeoutSeconds", str(max(1, int(options.timeout_seconds)))))
        query.extend(_selector_query(options.selectors))
        # No total deadline: the server ends the stream after timeoutSeconds. A read timeout guards
        # against a dead connection (bookmarks arrive about once a minute on a real server).
        sock_read = None
        if options.timeout_seconds is not None:
            sock_read = options.timeout_seconds + self._timeouts.watch_slack
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self._timeouts.request, sock_read=sock_read)
        response = await self._send("GET", resource_path(ref, namespace), query=query, client_timeout=timeout)
        raw: aiohttp.ClientResponse = response.response
        try:
            if raw.status != 200:
                raise _error_from(raw.status, await raw.read(), raw.headers)
            while True:
                try:
                    line = await raw.content.readline()
                except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, TimeoutError) as exc:
                    # As with the in-process adapter, a cut stream just ends: re-watch from the last RV.
                    _log.debug("watch %s: stream ended early: %s", ref, exc)
                    return
                if not line:
                    return
                line = line.strip()
                if not line:
                    continue
                event = _watch_event(ref, line)
                if event.type == "ERROR":
                    if self._watch_errors == "raise":
                        raise ApiError.from_status(event.object)
                    yield event
                    return
                yield event
        finally:
            raw.release()

    # -- writes --------------------------------------------------------------------------------

    async def create(self, ref: ResourceRef, obj: JSON, namespace: str | None = None) -> JSON:
        ns = namespace or _meta(obj).get("namespace")
        if ref.namespaced and not ns:
            raise ValueError(f"create {ref}: a namespaced object needs a namespace")
        return await self._json("POST", resource_path(ref, ns), body=obj)

    async def replace(self, ref: ResourceRef, obj: JSON) -> JSON:
        return await self._json("PUT", self._object_path(ref, obj), body=obj)

    async def replace_status(self, ref: ResourceRef, obj: JSON) -> JSON:
        return await self._json("PUT", self._object_path(ref, obj, "status"), body=obj)

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
        content_type = _PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"patch {ref}/{name}: unknown patch type {patch_type!r}")
        query: list[tuple[str, str]] = []
        if patch_type == "apply":
            if not field_manager:
                raise ValueError(f"server-side apply of {ref}/{name} needs a field_manager")
            if force:
                query.append(("force", "true"))
        if field_manager:
            query.append(("fieldManager", field_manager))
        return await self._json(
            "PATCH",
            resource_path(ref, namespace, name, subresource),
            query=query,
            body=body,
            content_type=content_type,
        )

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None) -> JSON | None:
        body = await self._json("DELETE", resource_path(ref, namespace, name))
        # Gone at once: the API answers with a Status or the object's last state. Still pending
        # (finalizers, graceful deletion): with the object, which then carries a deletionTimestamp.
        if body.get("kind") == "Status" or not _meta(body).get("deletionTimestamp"):
            return None
        return body

    # -- plumbing ------------------------------------------------------------------------------

    def _object_path(self, ref: ResourceRef, obj: JSON, subresource: str | None = None) -> str:
        meta = _meta(obj)
        name = meta.get("name")
        if not name:
            raise ValueError(f"{ref}: object without metadata.name")
        namespace = meta.get("namespace")
        if ref.namespaced and not namespace:
            raise ValueError(f"{ref}/{name}: a namespaced object needs metadata.namespace")
        return resource_path(ref, namespace, str(name), subresource)

    async def _json(
        self,
        method: str,
        path: str,
        query: _Query | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JSON:
        timeout = aiohttp.ClientTimeout(total=self._timeouts.request)
        response = await self._send(
            method, path, query=query, body=body, content_type=content_type, client_timeout=timeout
        )
        raw: aiohttp.ClientResponse = response.response
        try:
            try:
                data = await raw.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise Unavailable(f"{method} {path}: reading the answer failed: {exc}") from exc
            if raw.status >= 300:
                raise _error_from(raw.status, data, raw.headers)
            if not data:
                return {}
            parsed = json.loads(data)
            if not isinstance(parsed, dict):
                raise ApiError(raw.status, "InvalidResponse", f"{method} {path}: answer is not a JSON object")
            return parsed
        finally:
            raw.release()

    async def _send(
        self,
        method: str,
        path: str,
        query: _Query | None = None,
        body: Any = None,
        content_type: str = "application/json",
        client_timeout: aiohttp.ClientTimeout | None = None,
    ) -> Any:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        _method, url, header_params, _body, _post = await self._client.param_serialize(
            method=method,
            resource_path=path,
            query_params=query or [],
            header_params=headers,
            auth_settings=_AUTH,
        )
        try:
            return await self._client.call_api(
                method, url, header_params=header_params, body=body, _request_timeout=client_timeout
            )
        except (aiohttp.ClientConnectionError, TimeoutError, OSError) as exc:
            raise Unavailable(f"{method} {path}: API unreachable: {exc}") from exc


async def connect(
    kubeconfig: str | None = None,
    context: str | None = None,
    host: str | None = None,
    request_timeout: float = 30.0,
    watch_errors: Literal["yield", "raise"] = "yield",
) -> LiveKubeAPI:
    """Builds the adapter from, in order: an explicit ``host`` (plain HTTP fakes, tests), a kubeconfig
    path, the in-cluster service account, then the default kubeconfig (``$KUBECONFIG`` / ``~/.kube``)."""
    configuration = k8s_client.Configuration()
    configuration.retries = None
    if host is not None:
        configuration.host = host.rstrip("/")
    elif kubeconfig is not None:
        await _load_kube_config(
            config_file=kubeconfig, context=context, client_configuration=configuration, persist_config=False
        )
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        _load_incluster_config(client_configuration=configuration)
    else:
        await _load_kube_config(
            config_file=os.environ.get("KUBECONFIG") or None,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    return LiveKubeAPI(k8s_client.ApiClient(configuration), request_timeout=request_timeout, watch_errors=watch_errors)


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _selector_query(selectors: Selectors | None) -> list[tuple[str, str]]:
    query: list[tuple[str, str]] = []
    if selectors is not None:
        if selectors.label_selector:
            query.append(("labelSelector", selectors.label_selector))
        if selectors.field_selector:
            query.append(("fieldSelector", selectors.field_selector))
    return query


def _watch_event(ref: ResourceRef, line: bytes) -> WatchEvent:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise ApiError(500, "InvalidResponse", f"watch {ref}: undecodable event line: {exc}") from exc
    kind = data.get("type") if isinstance(data, dict) else None
    obj = data.get("object") if isinstance(data, dict) else None
    if kind not in _WATCH_TYPES or not isinstance(obj, dict):
        raise ApiError(500, "InvalidResponse", f"watch {ref}: malformed event of type {kind!r}")
    return WatchEvent(kind, obj)


def _error_from(status: int, data: bytes, headers: Mapping[str, str]) -> ApiError:
    body: Any = None
    try:
        body = json.loads(data) if data else None
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("kind") != "Status":
        text = data[:200].decode("utf-8", "replace") if data else ""
        body = {"code": status, "message": text or f"HTTP {status}"}
    if status == 429:
        err: ApiError = Unavailable(str(body.get("message") or "too many requests"), body.get("details"), code=429)
    else:
        err = ApiError.from_status(body, status)
        if err.code != status:
            reason, message = str(body.get("reason") or "Error"), str(body.get("message") or "")
            err = ApiError(status, reason, message, body.get("details"))
    err.retry_after = _retry_after(headers)
    return err


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None

