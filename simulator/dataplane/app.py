"""The fake Dataplane API's HTTP surface (Starlette ASGI app) over a ``FakeDataplane``.

Reachable in-process through ``httpx.ASGITransport`` (no sockets) or served by uvicorn. Every
response carries ``Configuration-Version``; bad credentials get 401; errors are the API's JSON
``{"code", "message"}`` (as text/plain for the raw endpoints). ``/_sim/*`` are admin endpoints for
faults, restarts and counters (not part of the real API).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from simulator.dataplane.instance import Answer, ApiError, FakeDataplane

Handler = Callable[[Request], Awaitable[Answer]]
_CFG = "/v3/services/haproxy/configuration"
_STORAGE = "/v3/services/haproxy/storage"
_KINDS = ("maps", "general", "ssl_certificates")


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
    name = str(form.get("id") or upload.filename or "")
    if not name:
        raise ApiError(400, "file name is required")
    return name, content


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body())
    except ValueError as exc:
        raise ApiError(400, f"invalid JSON body: {exc}") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "body must be a JSON object")
    return body


def create_app(fake: FakeDataplane) -> Starlette:
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
                    injected = fake.take_injected_error(request.url.path)
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
            if answer.status == 204:
                return Response(status_code=204, headers=headers)
            return JSONResponse(answer.body, answer.status, headers=headers)

        return wrapped

    def kind_of(request: Request) -> str:
        kind = str(request.path_params["kind"])
        if kind not in _KINDS:
            raise ApiError(404, f"unknown storage {kind}")
        return kind

    # -- handlers -------------------------------------------------------------------------------

    async def info(request: Request) -> Answer:
        return Answer(200, body=fake.info())

    async def health(request: Request) -> Answer:
        up = fake.driver is None or fake.driver.running
        return Answer(200, body={"haproxy": "up" if up else "down"})

    async def version(request: Request) -> Answer:
        tx = request.query_params.get("transaction_id")
        if tx is not None:
            transaction = fake.transactions.get(tx)
            if transaction is None:
                raise ApiError(404, f"transaction {tx} not found")
            return Answer(200, text=f"{transaction.version}\n")
        return Answer(200, text=f"{fake.version}\n")

    async def raw_get(request: Request) -> Answer:
        return Answer(200, text=fake.raw())

    async def raw_post(request: Request) -> Answer:
        if request.query_params.get("transaction_id") is not None:
            raise ApiError(400, "raw configuration in a transaction is not supported by the fake")
        text = (await request.body()).decode()
        return await fake.post_raw(text, _int_param(request, "version"))

    async def server_get(request: Request) -> Answer:
        p = request.path_params
        return Answer(200, body=fake.get_server(p["backend"], p["name"], request.query_params.get("transaction_id")))

    async def server_put(request: Request) -> Answer:
        p = request.path_params
        version = _int_param(request, "version")
        tx = request.query_params.get("transaction_id")
        return await fake.replace_server(
            p["backend"], p["name"], await _json_body(request), version=version, transaction_id=tx
        )

    async def tx_list(request: Request) -> Answer:
        return Answer(200, body=[t.as_json() for t in fake.transactions.values()])

    async def tx_start(request: Request) -> Answer:
        return Answer(201, body=fake.start_transaction(_int_param(request, "version")).as_json())

    async def tx_get(request: Request) -> Answer:
        tx = fake.transactions.get(request.path_params["id"])
        if tx is None:
            raise ApiError(404, "transaction not found")
        return Answer(200, body=tx.as_json())

    async def tx_commit(request: Request) -> Answer:
        return await fake.commit_transaction(
            request.path_params["id"], force_reload=_bool_param(request, "force_reload")
        )

    async def tx_delete(request: Request) -> Answer:
        fake.abort_transaction(request.path_params["id"])
        return Answer(204)

    async def reload_get(request: Request) -> Answer:
        return Answer(200, body=fake.reload_status(request.path_params["id"]))

    async def reload_list(request: Request) -> Answer:
        return Answer(200, body=fake.reloads.listing())

    async def storage_list(request: Request) -> Answer:
        return Answer(200, body=fake.storage.listing(kind_of(request)))

    async def storage_create(request: Request) -> Answer:
        kind = kind_of(request)
        name, content = await _upload(request)
        return fake.storage_create(kind, name, content)

    async def storage_get(request: Request) -> Answer:
        return fake.storage_get(kind_of(request), request.path_params["name"])

    async def storage_put(request: Request) -> Answer:
        kind = kind_of(request)
        if kind == "general":
            _, content = await _upload(request)
        else:
            content = (await request.body()).decode()
        return fake.storage_replace(kind, request.path_params["name"], content)

    async def storage_delete(request: Request) -> Answer:
        return fake.storage_delete(kind_of(request), request.path_params["name"])

    async def map_list(request: Request) -> Answer:
        return Answer(200, body=[{"name": f.name, "file": f.path} for f in fake.storage.files["maps"].values()])

    async def map_entries(request: Request) -> Answer:
        return Answer(200, body=fake.map_entries(request.path_params["name"]))

    async def map_entry_add(request: Request) -> Answer:
        body = await _json_body(request)
        if "key" not in body:
            raise ApiError(400, "key is required")
        return await fake.map_entry_write(
            request.path_params["name"], str(body["key"]), str(body.get("value", "")), "add"
        )

    async def map_entry_put(request: Request) -> Answer:
        body = await _json_body(request)
        p = request.path_params
        return await fake.map_entry_write(p["name"], p["key"], str(body.get("value", "")), "set")

    async def map_entry_delete(request: Request) -> Answer:
        p = request.path_params
        return await fake.map_entry_write(p["name"], p["key"], None, "delete")

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
        await fake.restart()
        return Answer(200, body=fake.state())

    routes = [
        Route("/v3/info", endpoint(info), methods=["GET"]),
        Route("/v3/health", endpoint(health), methods=["GET"]),
        Route(f"{_CFG}/version", endpoint(version), methods=["GET"]),
        Route(f"{_CFG}/raw", endpoint(raw_get, raw_errors=True), methods=["GET"]),
        Route(f"{_CFG}/raw", endpoint(raw_post, raw_errors=True), methods=["POST"]),
        Route(f"{_CFG}/backends/{{backend}}/servers/{{name}}", endpoint(server_get), methods=["GET"]),
        Route(f"{_CFG}/backends/{{backend}}/servers/{{name}}", endpoint(server_put), methods=["PUT"]),
        Route("/v3/services/haproxy/transactions", endpoint(tx_list), methods=["GET"]),
        Route("/v3/services/haproxy/transactions", endpoint(tx_start), methods=["POST"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_get), methods=["GET"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_commit), methods=["PUT"]),
        Route("/v3/services/haproxy/transactions/{id}", endpoint(tx_delete), methods=["DELETE"]),
        Route("/v3/services/haproxy/reloads", endpoint(reload_list), methods=["GET"]),
        Route("/v3/services/haproxy/reloads/{id}", endpoint(reload_get), methods=["GET"]),
        Route(f"{_STORAGE}/{{kind}}", endpoint(storage_list), methods=["GET"]),
        Route(f"{_STORAGE}/{{kind}}", endpoint(storage_create), methods=["POST"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_get), methods=["GET"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_put), methods=["PUT"]),
        Route(f"{_STORAGE}/{{kind}}/{{name}}", endpoint(storage_delete), methods=["DELETE"]),
        Route("/v3/services/haproxy/runtime/maps", endpoint(map_list), methods=["GET"]),
        Route("/v3/services/haproxy/runtime/maps/{name}/entries", endpoint(map_entries), methods=["GET"]),
        Route("/v3/services/haproxy/runtime/maps/{name}/entries", endpoint(map_entry_add), methods=["POST"]),
        Route("/v3/services/haproxy/runtime/maps/{name}/entries/{key}", endpoint(map_entry_put), methods=["PUT"]),
        Route("/v3/services/haproxy/runtime/maps/{name}/entries/{key}", endpoint(map_entry_delete), methods=["DELETE"]),
        Route("/_sim/state", endpoint(sim_state, admin=True), methods=["GET"]),
        Route("/_sim/faults", endpoint(sim_faults, admin=True), methods=["POST"]),
        Route("/_sim/faults", endpoint(sim_clear, admin=True), methods=["DELETE"]),
        Route("/_sim/restart", endpoint(sim_restart, admin=True), methods=["POST"]),
    ]
    return Starlette(routes=routes)
