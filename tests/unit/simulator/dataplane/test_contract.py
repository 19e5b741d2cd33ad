"""Contract: every response of the fake Dataplane API, and every request the controller's client sends,
has the shape the real Dataplane API v3 documents.

``DOCUMENTED`` is written from the v3.2 specification and the real handlers (see the README's fake
Dataplane section for sources): per operation the statuses it may answer, whether a 202 carries a
``Reload-ID``, the query parameters it takes and the model its JSON body uses. The test drives every
route the fake serves (a route missing from ``DOCUMENTED`` fails it), then records a complete sync
of the controller's client and checks each request against the same table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.server_model import server_to_model
from haptic.dataplane.synchronizer import SyncOptions, VersionCache, sync
from simulator.dataplane.api_model import SERVER_FIELDS
from simulator.dataplane.app import create_app
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.certs import make_pem
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

_CFG = "/v3/services/haproxy/configuration"
_ST = "/v3/services/haproxy/storage"
_RT = "/v3/services/haproxy/runtime"
_VERSIONED = {"version", "transaction_id", "force_reload"}

ERROR = {"code", "message"}
TRANSACTION = {"_version", "id", "status"}
RELOAD = {"id", "status", "response", "reload_timestamp"}
FILE = {"storage_name", "file", "description", "size", "id"}
CERTIFICATE = FILE | {"serial", "issuers", "subject", "not_before", "not_after", "domains", "ip_addresses",
                      "algorithm", "sha1_finger_print", "sha256_finger_print", "status", "subject_key_id",
                      "authority_key_id", "subject_alternative_names", "chain_issuer", "chain_subject"}
MAP_ENTRY = {"id", "key", "value"}
RUNTIME_MAP = {"id", "file", "description", "storage_name", "size"}
RUNTIME_SERVER = {"id", "name", "address", "port", "admin_state", "operational_state"}
CRT_LIST_ENTRY = {"file", "line_number", "sni_filter", "ssl_bind_config"}
#: the RuntimeAddServer model (v3.2 specification; the server model's names, a subset of its fields)
RUNTIME_ADD_SERVER = {"name", "address", "port", "id", "agent-addr", "agent-check", "agent-inter", "agent-port",
                      "agent-send", "alpn", "backup", "check", "check-sni", "check-ssl", "downinter", "error_limit",
                      "fall", "fastinter", "health_check_address", "health_check_port", "inter", "maintenance",
                      "maxconn", "maxqueue", "minconn", "observe", "on-error", "on-marked-down", "on-marked-up",
                      "proto", "rise", "send-proxy", "send-proxy-v2", "slowstart", "sni", "ssl", "verify",
                      "weight", "ws"}


@dataclass(frozen=True)
class Op:
    statuses: frozenset[int]
    params: frozenset[str] = frozenset()
    model: frozenset[str] | None = None  # fields of a JSON object body (items, for a list)
    request_model: frozenset[str] | None = None
    reload_on_202: bool = True  # a 202 outside a transaction schedules a reload: Reload-ID
    key_pattern: str | None = None  # path parameters' documented pattern


def op(statuses: set[int], params: set[str] | None = None, model: set[str] | None = None,
       request_model: set[str] | None = None, **kw: Any) -> Op:
    return Op(frozenset(statuses), frozenset(params or ()), frozenset(model) if model is not None else None,
              frozenset(request_model) if request_model is not None else None, **kw)


_STORAGE_KINDS = "(maps|general|ssl_certificates|ssl_crt_lists)"
_MAP_PATTERN = r'^[^\r\n<>*;$#&{}"]+$'
SERVER = set(SERVER_FIELDS)

# (method, path regex) -> documented operation. Status 401 (bad credentials) applies to all.
DOCUMENTED: dict[tuple[str, str], Op] = {
    ("GET", "/v3/info"): op({200}),
    ("GET", "/v3/health"): op({200}, model={"haproxy"}),
    ("GET", "/v3/specification"): op({200}),
    ("GET", "/v3/specification_openapiv3"): op({200}),
    ("GET", f"{_CFG}/version"): op({200}, {"transaction_id"}),
    ("GET", f"{_CFG}/raw"): op({200}, {"transaction_id", "version"}),
    ("POST", f"{_CFG}/raw"): op({201, 202, 400, 409}, {"version", "skip_version", "skip_reload", "only_validate",
                                                          "force_reload", "X-Runtime-Actions"}),
    ("GET", f"{_CFG}/backends/[^/]+/servers"): op({200, 404}, {"transaction_id"}, SERVER),
    ("POST", f"{_CFG}/backends/[^/]+/servers"): op({201, 202, 400, 404, 409}, _VERSIONED, SERVER, SERVER),
    ("GET", f"{_CFG}/backends/[^/]+/servers/[^/]+"): op({200, 404}, {"transaction_id"}, SERVER),
    ("PUT", f"{_CFG}/backends/[^/]+/servers/[^/]+"): op({200, 202, 400, 404, 406, 409}, _VERSIONED, SERVER, SERVER),
    ("DELETE", f"{_CFG}/backends/[^/]+/servers/[^/]+"): op({202, 204, 404, 409}, _VERSIONED),
    ("GET", "/v3/services/haproxy/transactions"): op({200}, {"status"}, TRANSACTION),
    ("POST", "/v3/services/haproxy/transactions"): op({201, 400, 406, 409, 429}, {"version"}, TRANSACTION),
    ("GET", "/v3/services/haproxy/transactions/[^/]+"): op({200, 404}, model=TRANSACTION),
    ("PUT", "/v3/services/haproxy/transactions/[^/]+"): op({200, 202, 400, 404, 406, 409}, {"force_reload"},
                                                            TRANSACTION),
    ("DELETE", "/v3/services/haproxy/transactions/[^/]+"): op({204, 404}),
    ("GET", "/v3/services/haproxy/reloads"): op({200}, model=RELOAD),
    ("GET", "/v3/services/haproxy/reloads/[^/]+"): op({200, 404}, model=RELOAD),
    ("GET", f"{_ST}/{_STORAGE_KINDS}"): op({200}, model=FILE),
    ("POST", f"{_ST}/(maps|general)"): op({201, 400, 409}, {"force_reload"}, FILE),
    ("POST", f"{_ST}/(ssl_certificates|ssl_crt_lists)"): op({201, 202, 400, 409}, {"skip_reload", "force_reload"},
                                                           CERTIFICATE),
    ("GET", f"{_ST}/{_STORAGE_KINDS}/[^/]+"): op({200, 404}, model=CERTIFICATE),
    ("PUT", f"{_ST}/(maps|general)/[^/]+"): op({202, 204, 400, 404}, {"skip_reload", "force_reload"}),
    ("PUT", f"{_ST}/(ssl_certificates|ssl_crt_lists)/[^/]+"): op({200, 202, 400, 404}, {"skip_reload", "force_reload"},
                                                                CERTIFICATE),
    ("DELETE", f"{_ST}/(maps|general)/[^/]+"): op({204, 404, 409}),
    ("DELETE", f"{_ST}/(ssl_certificates|ssl_crt_lists)/[^/]+"): op({202, 204, 404, 409},
                                                                   {"skip_reload", "force_reload"}),
    ("GET", f"{_ST}/ssl_crt_lists/[^/]+/entries"): op({200, 404}, model=CRT_LIST_ENTRY),
    ("POST", f"{_ST}/ssl_crt_lists/[^/]+/entries"): op({201, 202, 400, 404}, {"force_reload"}, CRT_LIST_ENTRY,
                                                       CRT_LIST_ENTRY),
    ("DELETE", f"{_ST}/ssl_crt_lists/[^/]+/entries"): op({202, 204, 400, 404},
                                                        {"certificate", "line_number", "force_reload"}),
    ("GET", f"{_RT}/info"): op({200, 500}),
    ("GET", f"{_RT}/maps"): op({200, 404, 500}, {"include_unmanaged"}, RUNTIME_MAP),
    ("GET", f"{_RT}/maps/[^/]+"): op({200, 404}, model=RUNTIME_MAP, key_pattern=_MAP_PATTERN),
    ("PUT", f"{_RT}/maps/[^/]+"): op({201, 400, 404, 500}, {"force_sync"}, MAP_ENTRY, MAP_ENTRY,
                                    key_pattern=_MAP_PATTERN),
    ("DELETE", f"{_RT}/maps/[^/]+"): op({204, 404}, {"force_sync", "forceDelete"}, key_pattern=_MAP_PATTERN),
    ("GET", f"{_RT}/maps/[^/]+/entries"): op({200, 404}, model=MAP_ENTRY, key_pattern=_MAP_PATTERN),
    ("POST", f"{_RT}/maps/[^/]+/entries"): op({201, 400, 409, 500}, {"force_sync"}, MAP_ENTRY, MAP_ENTRY,
                                             key_pattern=_MAP_PATTERN),
    ("GET", f"{_RT}/maps/[^/]+/entries/[^/]+"): op({200, 404}, model=MAP_ENTRY, key_pattern=_MAP_PATTERN),
    ("PUT", f"{_RT}/maps/[^/]+/entries/[^/]+"): op({200, 400, 404}, {"force_sync"}, MAP_ENTRY, {"value"},
                                                  key_pattern=_MAP_PATTERN),
    ("DELETE", f"{_RT}/maps/[^/]+/entries/[^/]+"): op({204, 404}, {"force_sync"}, key_pattern=_MAP_PATTERN),
    ("GET", f"{_RT}/backends/[^/]+/servers"): op({200, 404, 500}, model=RUNTIME_SERVER),
    ("GET", f"{_RT}/backends/[^/]+/servers/[^/]+"): op({200, 404}, model=RUNTIME_SERVER),
    ("POST", f"{_RT}/backends/[^/]+/servers"): op({201, 400, 404, 409, 500}, model=RUNTIME_ADD_SERVER,
                                                 request_model=RUNTIME_ADD_SERVER),
    ("PUT", f"{_RT}/backends/[^/]+/servers/[^/]+"): op({200, 400, 404, 500}, model=RUNTIME_SERVER,
                                                     request_model={"admin_state", "operational_state"}),
}
_RELOAD_ID = re.compile(r"^\d{4}-\d{2}-\d{2}-\d+$")


def documented(method: str, path: str) -> Op:
    matches = [o for (m, p), o in DOCUMENTED.items() if m == method and re.fullmatch(p, path)]
    assert len(matches) == 1, f"{method} {path}: {len(matches)} documented operations"
    return matches[0]


def _segments(raw_path: str) -> list[str]:
    from urllib.parse import unquote

    return [unquote(s) for s in raw_path.split("/")]


class Recorder(httpx.AsyncBaseTransport):
    """Checks and records every exchange that passes through it."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, check_requests: bool = True) -> None:
        self.inner = inner
        self.check_requests = check_requests  # off when the requests are deliberately wrong ones
        self.seen: list[tuple[str, str, int]] = []
        self.problems: list[str] = []

    def check_request(self, request: httpx.Request) -> Op:
        path = request.url.raw_path.decode().split("?")[0]
        spec = documented(request.method, path)
        if not self.check_requests:
            return spec
        extra = set(request.url.params) - spec.params
        if extra:
            self.problems.append(f"{request.method} {path}: undocumented query parameters {sorted(extra)}")
        if spec.key_pattern is not None:
            for value in _segments(path)[6:]:
                if value not in ("entries",) and not re.fullmatch(spec.key_pattern, value):
                    self.problems.append(f"{request.method} {path}: {value!r} does not match {spec.key_pattern}")
        content_type = request.headers.get("content-type", "")
        if request.content and "json" in content_type and spec.request_model is not None:
            body = json.loads(request.content)
            items = body if isinstance(body, list) else [body]
            for item in items:
                unknown = set(item) - spec.request_model
                if unknown:
                    self.problems.append(f"{request.method} {path}: body fields not in the model {sorted(unknown)}")
        if path.endswith("/configuration/raw") and request.method == "POST" and "text/plain" not in content_type:
            self.problems.append(f"POST raw sent as {content_type!r}, not text/plain")
        multipart = request.method in ("POST", "PUT") and "/storage/" in path and "multipart" in content_type
        if multipart and b'name="file_upload"' not in request.content:
            self.problems.append(f"{request.method} {path}: multipart without a file_upload field")
        return spec

    def check_response(self, request: httpx.Request, spec: Op, response: httpx.Response, body: bytes) -> None:
        path = request.url.raw_path.decode().split("?")[0]
        where = f"{request.method} {path} -> {response.status_code}"
        if not response.headers.get("Configuration-Version", "").isdigit():
            self.problems.append(f"{where}: no integer Configuration-Version header")
        if response.status_code == 401:
            return
        if response.status_code not in spec.statuses:
            self.problems.append(f"{where}: status not documented ({sorted(spec.statuses)})")
        reload_id = response.headers.get("Reload-ID")
        in_transaction = "transaction_id" in request.url.params
        validate_only = request.url.params.get("only_validate") in ("1", "true")
        if response.status_code == 202 and spec.reload_on_202 and not in_transaction and not validate_only:
            if reload_id is None or not _RELOAD_ID.match(reload_id):
                self.problems.append(f"{where}: 202 without a Reload-ID ({reload_id!r})")
        elif reload_id is not None:
            self.problems.append(f"{where}: Reload-ID {reload_id!r} on an answer that schedules no reload")
        if not body or "json" not in response.headers.get("content-type", ""):
            return
        parsed = json.loads(body)
        model = ERROR if response.status_code >= 400 else spec.model
        items = parsed if isinstance(parsed, list) else [parsed]
        for item in items:
            if model is not None and isinstance(item, dict) and not set(item) <= model:
                self.problems.append(f"{where}: fields not in the model {sorted(set(item) - model)}")
            if response.status_code >= 400 and set(item) != ERROR:
                self.problems.append(f"{where}: error body is not {{code, message}}: {item}")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        spec = self.check_request(request)
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.check_response(request, spec, response, body)
        self.seen.append((request.method, request.url.raw_path.decode().split("?")[0], response.status_code))
        return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)


CONFIG = FRONTEND_FE + """    use_backend %[req.hdr(host),concat(,txn.path),map(/etc/haproxy/maps/path.map,web)]

frontend tls
    bind :8443 ssl crt-list /etc/haproxy/general/crt-list.txt
    default_backend web

backend web
    server SRV_1 10.0.0.1:80 weight 10 check resolve-prefer ipv4
    server SRV_2 127.0.0.1:1 disabled
"""


def _aux(serial: int, entries: str) -> AuxFiles:
    return AuxFiles(maps={"path.map": entries}, crt_lists={"crt-list.txt": "/etc/haproxy/ssl/example_com.pem\n"},
                    certificates={"example.com.pem": make_pem("example.com", serial)})


async def test_client_requests_are_the_documented_ones() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    recorder = Recorder(httpx.ASGITransport(app=create_app(fake)))
    async with DataplaneClient("http://pod:5555", "admin", "adminpwd", transport=recorder) as client:
        cache = VersionCache()
        steps: list[tuple[str, AuxFiles]] = [
            (CONFIG, _aux(1, "shop.example.com/ web\n")),
            (CONFIG.replace("127.0.0.1:1 disabled", "10.0.0.2:80"), _aux(1, "shop.example.com/ web\n")),
            (CONFIG.replace("127.0.0.1:1 disabled", "10.0.0.2:80"),
             _aux(2, "shop.example.com/ api\nshop.example.com/v1/health web\n")),
            (CONFIG, _aux(2, "shop.example.com/v1/health web\n")),
            (CONFIG.replace("weight 10", "weight 20"), _aux(2, "x web\n")),
            # a server slot more: added at runtime, the file written without a reload
            (CONFIG.replace("weight 10", "weight 20") + "    server SRV_3 10.0.0.3:80 weight 5\n", _aux(2, "x web\n")),
        ]
        for text, aux in steps:
            result = await sync(client, text, aux, cache=cache, options=SyncOptions(force_aux_compare=True))
            assert result.ok, result.errors
        assert {m for m, _, _ in recorder.seen} >= {"GET", "POST", "PUT", "DELETE"}
        assert any("/runtime/maps/path.map/entries/" in p for _, p, _ in recorder.seen)
        assert any(m == "PUT" and "/servers/SRV_2" in p for m, p, _ in recorder.seen)
        assert ("POST", "/v3/services/haproxy/runtime/backends/web/servers", 201) in recorder.seen
        assert fake.counters.reloads == 1 and "SRV_3 10.0.0.3:80 weight 5" in fake.raw()  # the first push only
    assert recorder.problems == []
    await fake.aclose()


async def test_every_route_of_the_fake_answers_in_the_documented_shape() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    app = create_app(fake)
    recorder = Recorder(httpx.ASGITransport(app=app), check_requests=False)
    async with httpx.AsyncClient(transport=recorder, base_url="http://pod:5555", auth=("admin", "adminpwd")) as h:
        await _exercise(h)
        assert (await h.get("/v3/info", auth=("admin", "wrong"))).status_code == 401
    served = [(method, route.path) for route in _routes(app) for method in sorted(route.methods or ()) if
              method != "HEAD" and route.path.startswith("/v3/")]
    undocumented = []
    for method, path in served:
        concrete = re.sub(r"\{[^}]+\}", "x", path.replace("{kind}", "maps"))
        if not any(m == method and re.fullmatch(p, concrete) for m, p in DOCUMENTED):
            undocumented.append(f"{method} {path}")
    assert undocumented == []
    exercised = {(m, _template(m, p, served)) for m, p, _ in recorder.seen}
    assert [f"{m} {p}" for m, p in served if (m, p) not in exercised] == []
    assert recorder.problems == []
    await fake.aclose()


def _routes(app: Any) -> list[Route]:
    return [r for r in app.app.routes if isinstance(r, Route)]


def _template(method: str, path: str, served: list[tuple[str, str]]) -> str:
    """The route a request hit: the most literal template that matches (``ssl_crt_lists/{name}/entries``
    over ``{kind}/{name}``)."""
    candidates = [t for m, t in served if m == method and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", t), path)]
    return min(candidates, key=lambda t: t.count("{")) if candidates else path


async def _exercise(h: httpx.AsyncClient) -> None:
    """Calls every route: the successful answer and, where cheap, a documented error."""
    cfg, st, rt = _CFG, _ST, _RT
    ok: Callable[[httpx.Response], None] = lambda r: None  # noqa: E731 - statuses are checked by the recorder
    for path in ("/v3/info", "/v3/health", "/v3/specification", "/v3/specification_openapiv3", f"{cfg}/version"):
        ok(await h.get(path))
    files = {"file_upload": ("path.map", b"shop.example.com/ web\nshop.example.com/api api\n")}
    await h.post(f"{st}/maps", files=files)
    await h.post(f"{st}/general", files={"file_upload": ("crt-list.txt", b"/etc/haproxy/ssl/example_com.pem\n")})
    pem = make_pem("example.com", 5).encode()
    await h.post(f"{st}/ssl_certificates", files={"file_upload": ("example.com.pem", pem)})
    await h.post(f"{st}/ssl_crt_lists", files={"file_upload": ("list.txt", b"/etc/haproxy/ssl/example_com.pem\n")})
    pushed = await h.post(f"{cfg}/raw", params={"version": 1}, content=CONFIG, headers={"Content-Type": "text/plain"})
    await h.post(f"{cfg}/raw", params={"version": 2, "only_validate": "true"}, content=CONFIG)
    await h.post(f"{cfg}/raw", params={"version": 99}, content=CONFIG)  # 409
    await h.post(f"{cfg}/raw", params={"version": 2}, content="global")  # 400
    for _ in range(10):
        if (await h.get(f"/v3/services/haproxy/reloads/{pushed.headers['Reload-ID']}")).json()["status"] != \
                "in_progress":
            break
        await __import__("asyncio").sleep(0.5)
    await h.get("/v3/services/haproxy/reloads")
    await h.get("/v3/services/haproxy/reloads/2030-01-01-9")  # 404
    await h.get(f"{cfg}/raw")
    await h.get(f"{cfg}/backends/web/servers")
    one = (await h.get(f"{cfg}/backends/web/servers/SRV_1")).json()
    version = int((await h.get(f"{cfg}/version")).text)
    await h.put(f"{cfg}/backends/web/servers/SRV_1", params={"version": version}, json={**one, "weight": 20})
    await h.put(f"{cfg}/backends/web/servers/SRV_1", params={"version": version + 1}, json={**one, "check": "disabled"})
    await h.put(f"{cfg}/backends/web/servers/SRV_1", params={"version": 1}, json=one)  # 409
    await h.put(f"{cfg}/backends/web/servers/SRV_1", params={"version": version + 2}, json={**one, "resolve_net": "x"})
    version = int((await h.get(f"{cfg}/version")).text)
    model = server_to_model("server SRV_9 10.0.0.9:80 resolve-net 10.0.0.0/8 agent-check agent-port 5555")
    await h.post(f"{cfg}/backends/web/servers", params={"version": version}, json=model)
    await h.delete(f"{cfg}/backends/web/servers/SRV_9", params={"version": version + 1})
    await h.delete(f"{cfg}/backends/web/servers/SRV_9", params={"version": version + 2})  # 404
    version = int((await h.get(f"{cfg}/version")).text)
    tx = (await h.post("/v3/services/haproxy/transactions", params={"version": version})).json()
    await h.get("/v3/services/haproxy/transactions")
    await h.get(f"/v3/services/haproxy/transactions/{tx['id']}")
    await h.put(f"{cfg}/backends/web/servers/SRV_2", params={"transaction_id": tx["id"]},
                json={"name": "SRV_2", "address": "10.0.0.3", "port": 80})
    await h.put(f"/v3/services/haproxy/transactions/{tx['id']}")
    other = (await h.post("/v3/services/haproxy/transactions", params={"version": version + 1})).json()
    await h.delete(f"/v3/services/haproxy/transactions/{other['id']}")
    await h.delete("/v3/services/haproxy/transactions/nope")  # 404
    for kind in ("maps", "general", "ssl_certificates", "ssl_crt_lists"):
        await h.get(f"{st}/{kind}")
    await h.get(f"{st}/maps/path.map")
    await h.get(f"{st}/ssl_certificates/example_com.pem")
    await h.get(f"{st}/maps/nope.map")  # 404
    await h.put(f"{st}/maps/path.map", content=b"shop.example.com/ web\nshop.example.com/api api\n")
    await h.put(f"{st}/general/crt-list.txt",
                files={"file_upload": ("crt-list.txt", b"/etc/haproxy/ssl/example_com.pem\n")})
    await h.put(f"{st}/ssl_certificates/example_com.pem", content=make_pem("example.com", 6).encode())
    await h.put(f"{st}/ssl_crt_lists/list.txt", content=b"/etc/haproxy/ssl/example_com.pem example.com\n")
    await h.get(f"{st}/ssl_crt_lists/list.txt/entries")
    await h.post(f"{st}/ssl_crt_lists/list.txt/entries", json={"file": "/etc/haproxy/ssl/example_com.pem",
                                                               "sni_filter": ["www.example.com"]})
    await h.delete(f"{st}/ssl_crt_lists/list.txt/entries", params={"certificate": "/etc/haproxy/ssl/example_com.pem"})
    await h.delete(f"{st}/maps/path.map")  # 409: referenced
    await h.post(f"{st}/maps", files={"file_upload": ("spare.map", b"")})
    await h.delete(f"{st}/maps/spare.map")
    await h.delete(f"{st}/ssl_crt_lists/list.txt")
    await h.post(f"{st}/ssl_certificates", files={"file_upload": ("spare.pem", make_pem("spare", 9).encode())})
    await h.delete(f"{st}/ssl_certificates/spare.pem")
    await h.delete(f"{st}/general/crt-list.txt")  # 409
    await h.get(f"{rt}/info")
    await h.get(f"{rt}/maps")
    await h.get(f"{rt}/maps", params={"include_unmanaged": "true"})
    await h.get(f"{rt}/maps/path.map")
    entries = f"{rt}/maps/path.map/entries"
    await h.get(entries)
    await h.post(entries, params={"force_sync": "true"}, json={"key": "shop.example.com/new", "value": "web"})
    await h.post(entries, json={"key": "shop.example.com/new", "value": "web"})  # 409
    await h.post(entries, json={"key": "bad\nkey", "value": "web"})  # 400
    key = "shop.example.com%2Fnew"
    await h.get(f"{entries}/{key}")
    await h.put(f"{entries}/{key}", params={"force_sync": "true"}, json={"value": "api"})
    await h.delete(f"{entries}/{key}", params={"force_sync": "true"})
    await h.delete(f"{entries}/{key}")  # 404
    await h.put(f"{rt}/maps/path.map", params={"force_sync": "true"}, json=[{"key": "a.example/", "value": "web"}])
    await h.delete(f"{rt}/maps/path.map")
    await h.post(f"{rt}/maps/nope.map/entries", json={"key": "k", "value": "v"})  # 500 unknown map
    await h.get(f"{rt}/backends/web/servers")
    await h.get(f"{rt}/backends/web/servers/SRV_1")
    await h.put(f"{rt}/backends/web/servers/SRV_1", json={"admin_state": "drain"})
    await h.get(f"{rt}/backends/nope/servers")  # 404
    await h.post(f"{rt}/backends/web/servers", json={"name": "DYN_1", "address": "10.0.0.7", "port": 80,
                                                      "maintenance": "disabled"})
    await h.post(f"{rt}/backends/web/servers", json={"name": "DYN_1", "address": "10.0.0.7"})  # 409
    await h.post(f"{rt}/backends/nope/servers", json={"name": "DYN_2", "address": "10.0.0.7"})  # 404
