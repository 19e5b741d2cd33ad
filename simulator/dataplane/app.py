"""The fake Dataplane API's HTTP surface (Starlette ASGI app) over a ``FakeDataplane``.

Reachable in-process through ``httpx.ASGITransport`` (no sockets) or served by uvicorn. Every
response carries ``Configuration-Version``; bad credentials get 401; errors are the API's JSON
``{"code", "message"}`` (as text/plain for the raw endpoints). Routing is on the escaped path and
each path parameter is then percent-decoded, as the real API's router does, so an encoded ``/``
(``%2F``) stays inside its parameter. ``/_sim/*`` are admin endpoints for faults, restarts and
counters (not part of the real API).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from simulator.dataplane.api_model import Answer, ApiError, check_path_value, check_socket_values
from simulator.dataplane.instance import FakeDataplane
from simulator.dataplane.storage_api import CRT_LISTS

Handler = Callable[[Request], Awaitable[Answer]]
_CFG = "/v3/services/haproxy/configuration"
_STORAGE = "/v3/services/haproxy/storage"
_RUNTIME = "/v3/services/haproxy/runtime"
_KINDS = ("maps", "general", "ssl_certificates", CRT_LISTS)


def _authorized(request: Request, username: str, password: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        user, _, pw = base64.b64decode(encoded).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return secrets.compare_digest(user, username) and secrets.compare_digest(pw, password)


def _param(request: Request, name: str) -> str:
    """A path parameter, percent-decoded once (routing saw it still encoded)."""
    return unquote(str(request.path_params[name]))


def _map_param(request: Request, name: str) -> str:
    value = _param(request, name)
    check_path_value(name, value)
    return value


def _int_param(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise ApiError(400, f"query parameter {name} must be an integer") from exc


def _bool_param(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").lower() in ("1", "true", "yes")


async def _upload(request: Request) -> tuple[str, str]:
    """(filename, content) of a multipart ``file_upload``."""
    form = await request.form()
    upload = form.get("file_upload")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "multipart field file_upload is required")
    content = (await upload.read()).decode()
    name = str(upload.filename or form.get("id") or "")
    if not name:
        raise ApiError(400, "file name is required")
    return name, content


async def _json(request: Request) -> Any:
    try:
        return json.loads(await request.body())
    except ValueError as exc:
        raise ApiError(400, f"invalid JSON body: {exc}") from exc


async def _json_body(request: Request) -> dict[str, Any]:
    body = await _json(request)
    if not isinstance(body, dict):
        raise ApiError(400, "body must be a JSON object")
    return body


class _EscapedPathRouting:
    """Routes on the raw (still percent-encoded) path: ``_param`` decodes each parameter after."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            raw = bytes(scope["raw_path"]).split(b"?", 1)[0]
            scope = {**scope, "path": raw.decode("latin-1")}
        await self.app(scope, receive, send)


def create_app(fake: FakeDataplane) -> ASGIApp:
    """The ASGI app serving ``fake``."""

    def endpoint(handler: Handler, *, raw_errors: bool = False, admin: bool = False) -> Callable[..., Any]:
        async def wrapped(request: Request) -> Response:
            headers = {"Configuration-Version": str(fake.version)}
            if not _authorized(request, fake.options.username, fake.options.password):
                return JSONResponse({"code": 401, "message": "unauthorized"}, 401, headers=headers)
            try:
                if not admin:
                    fake.counters.requests += 1
                    if fake.faults.delay > 0:
                        await asyncio.sleep(fake.faults.delay)
                    injected = fake.take_injected_error(unquote(request.url.path))
                    if injected is not None:
                        raise ApiError(injected, "injected fault")
                answer = await handler(request)
            except ApiError as exc:
                error = {"code": exc.status, "message": exc.message}
                headers["Configuration-Version"] = str(fake.version)
                if raw_errors:
                    return PlainTextResponse(json.dumps(error), exc.status, headers=headers)
                return JSONResponse(error, exc.status, headers=headers)
            headers["Configuration-Version"] = str(fake.version)
            if answer.reload_id is not None:
                headers["Reload-ID"] = answer.reload_id
            if answer.text is not None:
                return Response(answer.text, answer.status, headers=headers, media_type=answer.media_type)
            if answer.status == 204 or (answer.body is None and answer.status == 202):
                return Response(status_code=answer.status, headers=headers)
            return JSONResponse(answer.body, answer.status, headers=headers)

        return wrapped

    def kind_of(request: Request) -> str:
        kind = str(request.path_params["kind"])
        if kind not in _KINDS:
            raise ApiError(404, f"unknown storage {kind}")
        return kind

    def tx(request: Request) -> str | None:
        return request.query_params.get("transaction_id")

    # -- handlers -------------------------------------------------------------------------------

    async def info(request: Request) -> Answer:
        return Answer(200, body=fake.info())

    async def health(request: Request) -> Answer:
        return Answer(200, body={"haproxy": "up" if fake.runtime_available else "down"})

    async def specification(request: Request) -> Answer:
        paths: dict[str, dict[str, Any]] = {}
        for route in routes:
            if isinstance(route, Route) and route.path.startswith("/v3/") and route.methods:
                ops = paths.setdefault(route.path.removeprefix("/v3"), {})
                for method in sorted(route.methods - {"HEAD"}):
                    ops[method.lower()] = {"responses": {}}
        return Answer(200, body={"openapi": "3.0.3", "servers": [{"url": "/v3"}],
                                 "info": {"title": "HAProxy Data Plane API (haptic-sim fake)",
                                          "version": fake.options.api_version.split()[0]},
                                 "paths": dict(sorted(paths.items()))})

    async def version(request: Request) -> Answer:
        tx_id = tx(request)
        if tx_id is not None:
            transaction = fake.transactions.get(tx_id)
            if transaction is None:
                raise ApiError(404, f"transaction {tx_id} not found")
            return Answer(200, text=f"{transaction.version}\n")
        return Answer(200, text=f"{fake.version}\n")

    async def raw_get(request: Request) -> Answer:
        return Answer(200, text=fake.raw())

    async def raw_post(request: Request) -> Answer:
        if tx(request) is not None:
            raise ApiError(400, "raw configuration in a transaction is not supported by the fake")
        text = (await request.body()).decode()
        return await fake.post_raw(text, _int_param(request, "version"),
                                   skip_reload=_bool_param(request, "skip_reload"),
                                   force_reload=_bool_param(request, "force_reload"),
                                   only_validate=_bool_param(request, "only_validate"))

    async def servers_get(request: Request) -> Answer:
        return Answer(200, body=fake.list_servers(_param(request, "backend"), tx(request)))

    async def server_create(request: Request) -> Answer:
        body = await _json_body(request)
        if tx(request) is None:
            check_socket_values("server", body)
        return await fake.create_server(_param(request, "backend"), body, version=_int_param(request, "version"),
                                        transaction_id=tx(request), force_reload=_bool_param(request, "force_reload"))

    async def server_get(request: Request) -> Answer:
        return Answer(200, body=fake.get_server(_param(request, "backend"), _param(request, "name"), tx(request)))

    async def server_put(request: Request) -> Answer:
        body = await _json_body(request)
        if tx(request) is None:
            check_socket_values("server", body)  # may go to the runtime socket
        return await fake.replace_server(_param(request, "backend"), _param(request, "name"), body,
                                         version=_int_param(request, "version"), transaction_id=tx(request),
                                         force_reload=_bool_param(request, "force_reload"))

    async def server_delete(request: Request) -> Answer:
        return await fake.delete_server(_param(request, "backend"), _param(request, "name"),
                                        version=_int_param(request, "version"), transaction_id=tx(request),
                                        force_reload=_bool_param(request, "force_reload"))

    async def tx_list(request: Request) -> Answer:
        return Answer(200, body=[t.as_json() for t in fake.transactions.values()])

    async def tx_start(request: Request) -> Answer:
        return Answer(201, body=fake.start_transaction(_int_param(request, "version")).as_json())

    async def tx_get(request: Request) -> Answer:
        transaction = fake.transactions.get(_param(request, "id"))
        if transaction is None:
            raise ApiError(404, "transaction not found")
        return Answer(200, body=transaction.as_json())

    async def tx_commit(request: Request) -> Answer:
        return await fake.commit_transaction(_param(request, "id"), force_reload=_bool_param(request, "force_reload"))

    async def tx_delete(request: Request) -> Answer:
        fake.abort_transaction(_param(request, "id"))
        return Answer(204)

    async def reload_get(request: Request) -> Answer:
        return Answer(200, body=fake.reload_status(_param(request, "id")))

    async def reload_list(request: Request) -> Answer:
        return Answer(200, body=fake.reloads.listing())

    async def storage_list(request: Request) -> Answer:
        return Answer(200, body=fake.files.listing(kind_of(request)))

    async def storage_create(request: Request) -> Answer:
        kind = kind_of(request)
        name, content = await _upload(request)
        return await fake.files.create(kind, name, content, skip_reload=_bool_param(request, "skip_reload"),
                                       force_reload=_bool_param(request, "force_reload"))

    async def storage_get(request: Request) -> Answer:
        return fake.files.get(kind_of(request), _param(request, "name"))

    async def storage_put(request: Request) -> Answer:
        kind = kind_of(request)
        if kind == "general":
            _, content = await _upload(request)
        else:
            content = (await request.body()).decode()
        return await fake.files.replace(kind, _param(request, "name"), content,
                                        skip_reload=_bool_param(request, "skip_reload"),
                                        force_reload=_bool_param(request, "force_reload"))

    async def storage_delete(request: Request) -> Answer:
        return await fake.files.delete(kind_of(request), _param(request, "name"),
                                       skip_reload=_bool_param(request, "skip_reload"),
                                       force_reload=_bool_param(request, "force_reload"))

    async def crt_list_entries(request: Request) -> Answer:
        return Answer(200, body=fake.files.crt_list_entries(_param(request, "name")))

    async def crt_list_entry_add(request: Request) -> Answer:
        return await fake.files.add_crt_list_entry(_param(request, "name"), await _json_body(request),
                                                   force_reload=_bool_param(request, "force_reload"))

    async def crt_list_entry_delete(request: Request) -> Answer:
        certificate = request.query_params.get("certificate")
        if not certificate:
            raise ApiError(400, "query parameter certificate is required")
        return await fake.files.delete_crt_list_entry(_param(request, "name"), certificate,
                                                      _int_param(request, "line_number"),
                                                      force_reload=_bool_param(request, "force_reload"))

    async def map_list(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.maps(_bool_param(request, "include_unmanaged")))

    async def map_get(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.one_map(_map_param(request, "name")))

    async def map_clear(request: Request) -> Answer:
        return await fake.runtime.clear_map(_map_param(request, "name"), force_sync=_bool_param(request, "force_sync"))

    async def map_payload(request: Request) -> Answer:
        name = _map_param(request, "name")
        entries = await _json(request)
        if not isinstance(entries, list):
            raise ApiError(400, "body must be a JSON array of map entries")
        check_socket_values("map entry", entries)
        for entry in entries:
            if not isinstance(entry, dict) or "key" not in entry:
                raise ApiError(400, "every map entry needs a key")
        for entry in entries:
            await fake.runtime.map_entry_write(name, str(entry["key"]), str(entry.get("value", "")), "add",
                                               force_sync=_bool_param(request, "force_sync"))
        return Answer(201, body=entries)

    async def map_entries(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.map_entries(_map_param(request, "name")))

    async def map_entry_get(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.map_entry(_map_param(request, "name"), _map_param(request, "key")))

    async def map_entry_add(request: Request) -> Answer:
        name = _map_param(request, "name")
        body = await _json_body(request)
        if "key" not in body:
            raise ApiError(400, "key is required")
        check_socket_values("map entry", body)
        return await fake.runtime.map_entry_write(name, str(body["key"]), str(body.get("value", "")), "add",
                                                  force_sync=_bool_param(request, "force_sync"))

    async def map_entry_put(request: Request) -> Answer:
        name, key = _map_param(request, "name"), _map_param(request, "key")
        body = await _json_body(request)
        if "value" not in body:
            raise ApiError(400, "value is required")
        check_socket_values("map entry", body)
        return await fake.runtime.map_entry_write(name, key, str(body["value"]), "set",
                                                  force_sync=_bool_param(request, "force_sync"))

    async def map_entry_delete(request: Request) -> Answer:
        name, key = _map_param(request, "name"), _map_param(request, "key")
        return await fake.runtime.map_entry_write(name, key, None, "delete",
                                                  force_sync=_bool_param(request, "force_sync"))

    async def runtime_servers(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.servers(_param(request, "backend")))

    async def runtime_server(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.server(_param(request, "backend"), _param(request, "name")))

    async def runtime_server_put(request: Request) -> Answer:
        body = await _json_body(request)
        check_socket_values("runtime server", body)
        return await fake.runtime.set_server_state(_param(request, "backend"), _param(request, "name"), body)

    async def runtime_server_add(request: Request) -> Answer:
        body = await _json_body(request)
        check_socket_values("runtime server", body)
        return await fake.runtime.add_server(_param(request, "backend"), body)

    async def runtime_info(request: Request) -> Answer:
        return Answer(200, body=fake.runtime.process_info())

    async def sim_state(request: Request) -> Answer:
        return Answer(200, body=fake.state())

    async def sim_faults(request: Request) -> Answer:
        body = await _json_body(request)
        try:
            fake.faults.update(body)
        except (ValueError, TypeError) as exc:
            raise ApiError(400, str(exc)) from exc
        return Answer(200, body=fake.faults.as_json())

    async def sim_clear(request: Request) -> Answer:
        fake.clear_faults()
        return Answer(200, body=fake.faults.as_json())

    async def sim_restart(request: Request) -> Answer:
        await fake.restart(keep_storage=_bool_param(request, "keep_storage"))
        return Answer(200, body=fake.state())

    entries = f"{_RUNTIME}/maps/{{name}}/entries"
    routes = [
        Route("/v3/info", endpoint(info), methods=["GET"]),
        Route("/v3/health", endpoint(health), methods=["GET"]),
        Route("/v3/specification", endpoint(specification), methods=["GET"]),
        Route("/v3/specification_openapiv3", endpoint(specification), methods=["GET"]),
        Route(f"{_CFG}/version", endpoint(version), methods=["GET"]),
        Route(f"{_CFG}/raw", endpoint(raw_get, raw_errors=True), methods=["GET"]),
        Route(f"{_CFG}/raw", endpoint(raw_post, raw_errors=True), methods=["POST"]),
        Route(f"{_CFG}/backends/{{backend}}/servers", endpoint(servers_get), methods=["GET"]),
        Route(f"{_CFG}/backends/{{backend}}/servers", endpoint(server_create), methods=["POST"]),
        Route(f"{_CFG}/backends/{{backend}}/servers/{{name}}", endpoint(server_get), methods=["GET"]),
        Route(f"{_CFG}/backends/{{backend}}/servers/{{name}}", endpoint(server_put), methods=["PUT"]),
        Route(f"{_CFG}/backends/{{backend}}/servers/{{name}}", endpoint(server_delete), methods=["DELETE"]),
        Route("/v3/services/haproxy/transactions", endpoint(tx_list), methods=["GET"]),
        Route("/v3/services/haproxy/transactions", endpoint(tx_start), methods=["POST"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_get), methods=["GET"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_commit), methods=["PUT"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_delete), methods=["DELETE"]),
        Route("/v3/services/haproxy/reloads", endpoint(reload_list), methods=["GET"]),
        Route("/v3/services/haproxy/reloads/{id}", endpoint(reload_get), methods=["GET"]),
        Route(f"{_STORAGE}/{CRT_LISTS}/{{name}}/entries", endpoint(crt_list_entries), methods=["GET"]),
        Route(f"{_STORAGE}/{CRT_LISTS}/{{name}}/entries", endpoint(crt_list_entry_add), methods=["POST"]),
        Route(f"{_STORAGE}/{CRT_LISTS}/{{name}}/entries", endpoint(crt_list_entry_delete), methods=["DELETE"]),
        Route(f"{_STORAGE}/{{kind}}", endpoint(storage_list), methods=["GET"]),
        Route(f"{_STORAGE}/{{kind}}", endpoint(storage_create), methods=["POST"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_get), methods=["GET"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_put), methods=["PUT"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_delete), methods=["DELETE"]),
        Route(f"{_RUNTIME}/info", endpoint(runtime_info), methods=["GET"]),
        Route(f"{_RUNTIME}/maps", endpoint(map_list), methods=["GET"]),
        Route(f"{_RUNTIME}/maps/{{name}}", endpoint(map_get), methods=["GET"]),
        Route(f"{_RUNTIME}/maps/{{name}}", endpoint(map_payload), methods=["PUT"]),
        Route(f"{_RUNTIME}/maps/{{name}}", endpoint(map_clear), methods=["DELETE"]),
        Route(entries, endpoint(map_entries), methods=["GET"]),
        Route(entries, endpoint(map_entry_add), methods=["POST"]),
        Route(f"{entries}/{{key}}", endpoint(map_entry_get), methods=["GET"]),
        Route(f"{entries}/{{key}}", endpoint(map_entry_put), methods=["PUT"]),
        Route(f"{entries}/{{key}}", endpoint(map_entry_delete), methods=["DELETE"]),
        Route(f"{_RUNTIME}/backends/{{backend}}/servers", endpoint(runtime_servers), methods=["GET"]),
        Route(f"{_RUNTIME}/backends/{{backend}}/servers", endpoint(runtime_server_add), methods=["POST"]),
        Route(f"{_RUNTIME}/backends/{{backend}}/servers/{{name}}", endpoint(runtime_server), methods=["GET"]),
        Route(f"{_RUNTIME}/backends/{{backend}}/servers/{{name}}", endpoint(runtime_server_put), methods=["PUT"]),
        Route("/_sim/state", endpoint(sim_state, admin=True), methods=["GET"]),
        Route("/_sim/faults", endpoint(sim_faults, admin=True), methods=["POST"]),
        Route("/_sim/faults", endpoint(sim_clear, admin=True), methods=["DELETE"]),
        Route("/_sim/restart", endpoint(sim_restart, admin=True), methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.router.redirect_slashes = False  # the real router answers 404, it does not redirect
    return _EscapedPathRouting(app)
