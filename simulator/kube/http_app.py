"""The fake API over HTTP (aiohttp.web on 127.0.0.1): REST paths, watch streams, discovery, admin faults."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from datetime import datetime
from typing import Any

import yaml
from aiohttp import web

from haptic.k8s.api import JSON, ApiError, NotFound

from . import admin, builtin_apis, conversion, discovery, protobuf
from .admission import admitted
from .authorization import Authorization, request_attributes
from .field_validation import collecting, warning_header
from .gofmt import go_json
from .openapi import OpenAPI
from .rbac import UserInfo
from .resources import ResourceType
from .status_body import status_bytes
from .store import FakeKubeAPI, ListResult
from .tables import to_table, wants_table, watch_table
from .tls import ServingTLS
from .validation import bad_request, yaml_error
from .watch import Watch

MAX_BODY = 3 * 1024 * 1024
_TOO_DEEP = "error decoding body: the object nests too deeply"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}
log = logging.getLogger(__name__)


def _json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=json.dumps(body, separators=(",", ":")).encode() + b"\n", status=status,
                        content_type="application/json", headers=headers)


def error_response(err: ApiError) -> web.Response:
    headers = {}
    if err.retry_after is not None:
        headers["Retry-After"] = str(int(err.retry_after + 0.999))
    return web.Response(body=status_bytes(err), status=err.code, content_type="application/json", headers=headers)


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1", "yes")


class _Target:
    """What a resource URL addresses."""

    __slots__ = ("name", "namespace", "rt", "subresource")

    def __init__(self, rt: ResourceType, namespace: str | None, name: str | None, subresource: str | None) -> None:
        self.rt = rt
        self.namespace = namespace
        self.name = name
        self.subresource = subresource


class KubeHTTPServer:
    """Serves a ``FakeKubeAPI`` on ``host:port`` (port 0 picks a free one; see ``url``)."""

    def __init__(self, api: FakeKubeAPI, host: str = "127.0.0.1", port: int = 0,
                 watch_timeout: float = 1800.0, tls: ServingTLS | None = None) -> None:
        self.api = api
        self.tls = tls
        self.host = host
        self.port = port
        self.watch_timeout = watch_timeout
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._reopen: asyncio.TimerHandle | None = None
        self._reopening: asyncio.Task[None] | None = None
        self.requests = 0
        # (method, path with query, status) of the last API requests, for tests to assert on.
        self.request_log: deque[tuple[str, str, int]] = deque(maxlen=10_000)
        self._watches: set[Watch] = set()
        # Authentication always; RBAC enforcement once ``auth.enable()`` is called.
        self.auth = Authorization(api)
        self.openapi = OpenAPI(api.types)
        self._listening = asyncio.Event()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        await self._listen()

    async def _listen(self) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True,
                                 ssl_context=self.tls.context if self.tls else None)
        await self._site.start()
        if self.port == 0:
            self.port = int(self._runner.addresses[0][1])
        self._listening.set()

    async def stop(self) -> None:
        if self._reopen is not None:
            self._reopen.cancel()
        for watch in list(self._watches):
            watch.close(dropped=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def refuse(self, seconds: float) -> None:
        """Stops listening for ``seconds`` (clients get "connection refused"), then listens again.
        Open watch streams are cut, as a server going down would."""
        self.api.refuse_connections(seconds)
        self._listening.clear()
        if self._site is not None:
            await self._site.stop()
            self._site = None
        loop = asyncio.get_running_loop()
        if self._reopen is not None:
            self._reopen.cancel()
        self._reopen = loop.call_later(seconds, self._listen_again)

    def _listen_again(self) -> None:
        if self._site is None and self._runner is not None:
            self._reopening = asyncio.get_running_loop().create_task(self._listen())

    async def listening(self) -> None:
        """Returns once the server accepts connections (at once, unless a ``refuse`` window is open)."""
        await self._listening.wait()

    async def reopen(self) -> None:
        """Ends a ``refuse`` window now: clears the fault and listens again."""
        if self._reopen is not None:
            self._reopen.cancel()
        self.api.faults.refuse_until = float("-inf")
        if self._site is None and self._runner is not None:
            await self._listen()

    # -- dispatch -------------------------------------------------------------------------------------

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        path = request.path
        if path.startswith("/_sim/"):
            try:
                return _json_response(await admin.handle(self, path[len("/_sim/"):], await request.read()))
            except ApiError as err:
                return error_response(err)
        if self.api.faults.refusing():
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=503)
        try:
            response = await self._serve(request, path)
        except ApiError as err:
            # Reason only: messages can quote request values (a failed JSON patch test on a Secret).
            log.debug("%s %s -> %s %s", request.method, request.path, err.code, err.reason)
            response = error_response(err)
        self.request_log.append((request.method, request.path_qs, response.status))
        return response

    async def _serve(self, request: web.Request, path: str) -> web.StreamResponse:
        user = self.auth.identify(request.headers)
        if self.auth.enforcing:
            self.auth.check(user, request_attributes(request.method, path, request.query))
        parts = [p for p in path.split("/") if p]
        types = self.api.types
        if path in ("/healthz", "/readyz", "/livez"):
            return web.Response(text="ok")
        if path in ("/version", "/version/"):  # the official client asks for "/version/"
            return _json_response(discovery.SERVER_VERSION)
        if parts[:2] == ["openapi", "v3"]:
            crds = self.api.objects(types.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions"))
            return _json_response(self.openapi.serve("/".join(parts[2:]), crds))
        if parts[:2] == ["openapi", "v2"]:
            raise NotFound("the server could not find the requested resource (openapi/v2 is not served; use v3)")
        if parts == ["api"]:
            return _json_response(discovery.api_versions(f"{self.host}:{self.port}"))
        if parts == ["apis"]:
            return _json_response(discovery.api_group_list(types))
        if parts and parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts and parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                return _json_response(discovery.api_group(types, parts[1]))
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise NotFound(f"the server could not find the requested resource ({path})")
        if not rest:
            return _json_response(discovery.api_resource_list(types, group, version))
        target = self._target(group, version, rest)
        await self.api.faults.gate(self._verb(request, target), target.rt)
        if request.query.get("dryRun") == "All" and request.method in ("POST", "PUT", "PATCH", "DELETE"):
            # The body is read before the dry-run block: no await may happen while the store is in dry mode.
            if request.can_read_body:
                await request.read()
            with self.api.dry_run():
                return await self._resource(request, target, user)
        if "dryRun" in request.query and request.query["dryRun"] != "All":
            raise bad_request(f"invalid dryRun value {request.query['dryRun']!r}: only 'All' is supported")
        return await self._resource(request, target, user)

    def _target(self, group: str, version: str, rest: list[str]) -> _Target:
        gv = f"{group}/{version}" if group else version
        namespace: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3 and not (len(rest) == 3 and rest[2] in ("status", "finalize")):
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise NotFound(f"the server could not find the requested resource ({'/'.join(rest)})")
        rt = self.api.resolve(gv, rest[0])
        if namespace is not None and not rt.namespaced:
            raise NotFound(f"the server could not find the requested resource ({rt.describe()} is cluster-scoped)")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return _Target(rt, namespace, name, sub)

    @staticmethod
    def _verb(request: web.Request, target: _Target) -> str:
        method = request.method
        if method == "GET":
            if target.name is not None:
                return "get"
            return "watch" if _flag(request.query.get("watch")) else "list"
        return {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method.lower())

    async def _body(self, request: web.Request) -> Any:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge",
                           f"request entity too large: limit is {MAX_BODY} bytes, got {request.content_length}")
        raw = await request.read()
        if len(raw) > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge",
                           f"request entity too large: limit is {MAX_BODY} bytes, got {len(raw)}")
        if not raw.strip():
            raise bad_request("the request body is empty")
        content_type = request.content_type
        if content_type == "application/vnd.kubernetes.protobuf":
            return protobuf.decode(raw)
        if "protobuf" in content_type or "cbor" in content_type:
            raise ApiError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted media types include: "
                           f"application/json, application/yaml (got {content_type!r})")
        if "yaml" in content_type:
            if raw.lstrip()[:1] in (b"{", b"["):
                # kubectl sends JSON as apply-patch+yaml; JSON is YAML, and json is far faster.
                try:
                    return json.loads(raw)
                except RecursionError:
                    raise bad_request(_TOO_DEEP) from None
                except ValueError:
                    pass
            try:
                return yaml.load(raw, Loader=_YAML_LOADER)
            except yaml.YAMLError as exc:
                raise bad_request(f"error decoding YAML body: {yaml_error(exc)}") from exc
            except RecursionError:
                raise bad_request(_TOO_DEEP) from None
        try:
            return json.loads(raw)
        except RecursionError:
            # A 100k-deep body once answered a bare 500: the API server refuses it as a bad request.
            raise bad_request(_TOO_DEEP) from None
        except ValueError as exc:
            raise bad_request(f"error decoding JSON body: {exc}") from exc

    def _manager(self, request: web.Request) -> str:
        manager = request.query.get("fieldManager")
        if manager:
            return manager
        agent = request.headers.get("User-Agent", "unknown")
        return agent.split("/", 1)[0].split(" ", 1)[0] or "unknown"

    async def _resource(self, request: web.Request, t: _Target, user: UserInfo) -> web.StreamResponse:
        if builtin_apis.is_special(t.rt, t.subresource):
            body = await self._body(request) if request.method in ("POST", "PUT", "PATCH") else None
            call = builtin_apis.Call(request.method, t.rt, t.namespace, t.name, t.subresource, body,
                                     _PATCH_TYPES.get(request.content_type), self._manager(request), user)
            answer, status = builtin_apis.serve(self.auth, call)
            return _json_response(answer, status)
        api = self.api
        method = request.method
        query = request.query
        write_rt = conversion.storage_type(api.types, t.rt)  # the stored version's type, when converted
        if method == "GET":
            if t.name is not None:
                obj = api.get(t.rt, t.namespace, t.name)
                if t.subresource is not None:
                    api.check_subresource(t.rt, t.subresource)
                if wants_table(request.headers.get("Accept", "")):
                    return _json_response(to_table(t.rt, [obj], str(api.resource_version), None, self._now()))
                return self._object_response(t.rt, obj)
            if _flag(query.get("watch")):
                return await self._watch(request, t)
            limit = int(query["limit"]) if query.get("limit", "").isdigit() else None
            result = api.list(t.rt, t.namespace, query.get("labelSelector"), query.get("fieldSelector"),
                              limit or None, query.get("continue") or None, query.get("resourceVersion"),
                              query.get("resourceVersionMatch"))
            if wants_table(request.headers.get("Accept", "")):
                return _json_response(to_table(t.rt, result.items, result.resource_version,
                                               result.continue_token, self._now()))
            return self._list_response(t.rt, result)
        if method == "POST":
            if t.name is not None:
                raise ApiError(405, "MethodNotAllowed", f"POST is not allowed on a single {t.rt.kind}")
            body = conversion.to_storage(t.rt, await self._body(request))
            manager, how = self._manager(request), query.get("fieldValidation")
            with collecting() as warnings:
                obj = await admitted(api, write_rt, t.namespace, None, None,
                                     lambda: api.create(write_rt, t.namespace, body, manager, field_validation=how))
            return self._object_response(t.rt, obj, 201, warnings)
        if method == "PUT":
            if t.name is None:
                raise ApiError(405, "MethodNotAllowed", f"PUT needs an object name ({t.rt.describe()})")
            body = conversion.to_storage(t.rt, await self._body(request))
            manager, name, how = self._manager(request), t.name, query.get("fieldValidation")
            with collecting() as warnings:
                obj = await admitted(api, write_rt, t.namespace, name, t.subresource,
                                     lambda: api.update(write_rt, t.namespace, name, body, t.subresource, manager, how))
            return self._object_response(t.rt, obj, 200, warnings)
        if method == "PATCH":
            if t.name is None:
                raise ApiError(405, "MethodNotAllowed", f"PATCH needs an object name ({t.rt.describe()})")
            patch_type = _PATCH_TYPES.get(request.content_type)
            if patch_type is None:
                raise ApiError(415, "UnsupportedMediaType",
                               f"the body of the request was in an unknown format - accepted media types include: "
                               f"{', '.join(_PATCH_TYPES)} (got {request.content_type!r})")
            body = await self._body(request)
            manager, name, force = self._manager(request), t.name, _flag(query.get("force"))
            how = query.get("fieldValidation")
            if conversion.converts(t.rt) and patch_type != "apply":
                obj = await admitted(api, write_rt, t.namespace, name, t.subresource,
                                     lambda: conversion.patch(api, t.rt, t.namespace, name, patch_type, body,
                                                              t.subresource, manager))
                return self._object_response(t.rt, obj)
            body = conversion.to_storage(t.rt, body)
            with collecting() as warnings:
                obj = await admitted(api, write_rt, t.namespace, name, t.subresource,
                                     lambda: api.patch(write_rt, t.namespace, name, patch_type, body, t.subresource,
                                                       manager, force, how))
            return self._object_response(t.rt, obj, 200, warnings)
        if method == "DELETE":
            options: Any = {}
            if request.can_read_body:
                raw = await request.read()
                if raw.strip():
                    try:
                        options = json.loads(raw)
                    except RecursionError:
                        raise bad_request(_TOO_DEEP) from None
                    except ValueError as exc:
                        raise bad_request(f"error decoding DeleteOptions: {exc}") from exc
            if not isinstance(options, dict):
                raise bad_request("DeleteOptions must be a JSON object")
            propagation = options.get("propagationPolicy") or query.get("propagationPolicy")
            if t.name is None:
                return self._delete_collection(t, request)
            obj, _gone = api.delete(t.rt, t.namespace, t.name, options.get("preconditions"), propagation)
            return self._object_response(t.rt, obj)
        raise ApiError(405, "MethodNotAllowed", f"method {method} is not allowed")

    def _delete_collection(self, t: _Target, request: web.Request) -> web.Response:
        result = self.api.list(t.rt, t.namespace, request.query.get("labelSelector"),
                               request.query.get("fieldSelector"))
        for obj in result.items:
            meta = obj["metadata"]
            with contextlib.suppress(NotFound):
                self.api.delete(t.rt, meta.get("namespace"), meta["name"])
        return _json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                               "details": {"kind": t.rt.plural, "group": t.rt.group}})

    def _now(self) -> datetime:
        return self.api.now()

    def _encode(self, rt: ResourceType, obj: JSON) -> bytes:
        if obj.get("apiVersion") != rt.api_version:
            served = conversion.to_served(rt, obj)
            return json.dumps({**served, "apiVersion": rt.api_version}, separators=(",", ":")).encode()
        return self.api.encoded(obj)

    def _object_response(self, rt: ResourceType, obj: JSON, status: int = 200,
                         warnings: list[str] | None = None) -> web.Response:
        # The API server's JSON encoder ends every body with a newline.
        response = web.Response(body=self._encode(rt, obj) + b"\n", status=status, content_type="application/json")
        for warning in warnings or ():
            response.headers.add("Warning", warning_header(warning))
        return response

    def _list_response(self, rt: ResourceType, result: ListResult) -> web.Response:
        meta: JSON = {"resourceVersion": result.resource_version}
        if result.continue_token:
            meta["continue"] = result.continue_token
        head = json.dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta},
                          separators=(",", ":")).encode()
        body = b"".join((head[:-1], b',"items":[', b",".join(self._encode(rt, o) for o in result.items), b"]}\n"))
        return web.Response(body=body, content_type="application/json")

    async def _watch(self, request: web.Request, t: _Target) -> web.StreamResponse:
        query = request.query
        timeout = self.watch_timeout
        if query.get("timeoutSeconds", "").isdigit() and int(query["timeoutSeconds"]) > 0:
            timeout = float(query["timeoutSeconds"])
        send_initial = _flag(query.get("sendInitialEvents")) if "sendInitialEvents" in query else None
        watch = self.api.watch(t.rt, t.namespace, query.get("labelSelector"), query.get("fieldSelector"),
                               query.get("resourceVersion"), timeout, _flag(query.get("allowWatchBookmarks")),
                               send_initial)
        self._watches.add(watch)
        table = wants_table(request.headers.get("Accept", ""))
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        try:
            await response.prepare(request)
            while True:
                batch = await watch.next_batch()
                if not batch:
                    break
                lines = []
                for etype, obj in batch:
                    if table and etype not in ("BOOKMARK", "ERROR"):
                        payload = json.dumps(watch_table(t.rt, obj, self._now()), separators=(",", ":")).encode()
                    elif etype in ("BOOKMARK", "ERROR"):
                        payload = go_json(obj).encode()
                    else:
                        payload = self._encode(t.rt, obj)
                    lines.append(b'{"type":"' + etype.encode() + b'","object":' + payload + b"}\n")
                await response.write(b"".join(lines))
            if watch.dropped:
                if request.transport is not None:
                    request.transport.abort()
                return response
            await response.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):
            watch.close()
            raise
        finally:
            watch.close()
            self._watches.discard(watch)
        return response


async def serve(api: FakeKubeAPI, host: str = "127.0.0.1", port: int = 0) -> KubeHTTPServer:
    """Starts serving ``api`` and returns the running server (``await server.stop()`` to end)."""
    server = KubeHTTPServer(api, host, port)
    await server.start()
    return server
