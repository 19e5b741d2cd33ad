"""The fake API over HTTP: bad input, discovery, watch streams, paging, patch types and admin faults."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from simulator.kube import FakeKubeAPI, KubeHTTPServer, serve
from tests.integration.kube_helpers import WIDGET_CRD, async_wait_until

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def server() -> AsyncIterator[KubeHTTPServer]:
    srv = await serve(FakeKubeAPI(bookmark_interval=0.05))
    yield srv
    await srv.stop()


@pytest.fixture
async def http(server: KubeHTTPServer) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(base_url=server.url) as session:
        yield session


async def call(http: aiohttp.ClientSession, method: str, path: str, body: Any = None,
               content_type: str = "application/json", raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    async with http.request(method, path, data=data, headers={"Content-Type": content_type}) as response:
        return response.status, await response.json(content_type=None)


async def test_bad_input_answers_status_and_changes_nothing(server: KubeHTTPServer,
                                                            http: aiohttp.ClientSession) -> None:
    rv = server.api.resource_version
    cases: list[tuple[str, str, Any, str, bytes | None, int, str]] = [
        ("POST", CMS, None, "application/json", b'{"metadata": {', 400, "decoding JSON"),
        ("POST", CMS, None, "application/yaml", b"metadata: [unclosed", 400, "YAML body"),
        ("POST", "/api/v1/namespaces/default/frobs", {"metadata": {"name": "x"}}, "application/json", None, 404,
         "frobs"),
        ("POST", CMS, {"kind": "Secret", "metadata": {"name": "x"}}, "application/json", None, 400, '"Secret"'),
        ("POST", CMS, {"metadata": {"name": "Not_DNS"}}, "application/json", None, 422, "Not_DNS"),
        ("POST", CMS, None, "application/json", b'{"data":{"k":"' + b"x" * (3 * 1024 * 1024) + b'"}}', 413,
         "limit"),
        ("POST", CMS, {"metadata": {"name": "x", "namespace": "other"}}, "application/json", None, 400,
         "namespace"),
        ("POST", CMS, ["not", "an", "object"], "application/json", None, 400, "JSON object"),
        ("PATCH", CMS + "/missing", {"data": {}}, "application/merge-patch+json", None, 404, "missing"),
        ("PATCH", CMS + "/missing", {"data": {}}, "text/plain", None, 415, "media types"),
        # Hostile bodies are bad requests with a message, never a 500.
        ("POST", CMS, None, "application/json", b"[" * 100_000 + b"]" * 100_000, 400, "nests too deeply"),
        ("POST", CMS, None, "application/yaml", b"[" * 100_000 + b"]" * 100_000, 400, "nests too deeply"),
        ("POST", CMS, None, "application/json", b'{"metadata": {"name": "caf\xe9"}}', 400, "decoding JSON"),
    ]
    for method, path, body, content_type, raw, code, needle in cases:
        status, answer = await call(http, method, path, body, content_type, raw)
        assert (status, answer["kind"], answer["code"]) == (code, "Status", code), (path, answer)
        assert needle in answer["message"], (needle, answer["message"])
    assert server.api.resource_version == rv


async def test_discovery_follows_crds(http: aiohttp.ClientSession) -> None:
    status, version = await call(http, "GET", "/version")
    assert status == 200 and version["major"] == "1"
    _, core = await call(http, "GET", "/api/v1")
    names = {r["name"]: r for r in core["resources"]}
    assert names["configmaps"]["namespaced"] and "watch" in names["configmaps"]["verbs"]
    assert "services/status" in names and "configmaps/status" not in names
    _, groups = await call(http, "GET", "/apis")
    assert "example.com" not in [g["name"] for g in groups["groups"]]
    status, _ = await call(http, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGET_CRD)
    assert status == 201
    _, groups = await call(http, "GET", "/apis")
    assert "example.com" in [g["name"] for g in groups["groups"]]
    _, resources = await call(http, "GET", "/apis/example.com/v1")
    assert [r["name"] for r in resources["resources"]] == ["widgets", "widgets/status"]
    _, root = await call(http, "GET", "/openapi/v3")
    assert "apis/example.com/v1" in root["paths"]
    status, created = await call(http, "POST", "/apis/example.com/v1/namespaces/default/widgets",
                                 {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert status == 201 and created["metadata"]["uid"]


async def test_list_pages_and_continue(server: KubeHTTPServer, http: aiohttp.ClientSession) -> None:
    for i in range(5):
        await call(http, "POST", CMS, {"metadata": {"name": f"c{i}"}})
    names: list[str] = []
    token = ""
    while True:
        _, page = await call(http, "GET", f"{CMS}?limit=2&continue={token}")
        names += [o["metadata"]["name"] for o in page["items"]]
        assert page["kind"] == "ConfigMapList" and page["metadata"]["resourceVersion"]
        token = page["metadata"].get("continue", "")
        if not token:
            break
        if len(names) == 4:
            await call(http, "POST", CMS, {"metadata": {"name": "late"}})
            server.api.compact()
            status, expired = await call(http, "GET", f"{CMS}?limit=2&continue={token}")
            assert (status, expired["reason"]) == (410, "Expired")
            break
    assert names == ["c0", "c1", "c2", "c3"]


async def watch_lines(http: aiohttp.ClientSession, query: str, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    async with http.get(f"{CMS}?watch=true&{query}") as response:
        assert response.status == 200
        async for line in response.content:
            out.append(json.loads(line))
            if len(out) == count:
                break
    return out


async def test_watch_stream_events_bookmarks_and_410(server: KubeHTTPServer, http: aiohttp.ClientSession) -> None:
    _, listed = await call(http, "GET", CMS)
    rv = listed["metadata"]["resourceVersion"]
    await call(http, "POST", CMS, {"metadata": {"name": "a"}})
    await call(http, "PATCH", CMS + "/a", {"data": {"k": "v"}}, "application/merge-patch+json")
    events = await watch_lines(http, f"resourceVersion={rv}&allowWatchBookmarks=true", 3)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "BOOKMARK"]
    assert events[1]["object"]["data"] == {"k": "v"}
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) >= int(events[1]["object"]["metadata"]
                                                                          ["resourceVersion"])
    server.api.compact()
    gone = await watch_lines(http, f"resourceVersion={rv}", 1)
    assert gone[0]["type"] == "ERROR" and gone[0]["object"]["code"] == 410
    async with http.get(f"{CMS}?watch=true&resourceVersion={server.api.resource_version}&timeoutSeconds=1") as r:
        assert await r.read() == b""


async def test_strategic_and_apply_content_types(http: aiohttp.ClientSession) -> None:
    svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "name": "a"}, {"port": 443, "name": "b"}]}}
    await call(http, "POST", "/api/v1/namespaces/default/services", svc)
    patch = {"spec": {"ports": [{"port": 443, "name": "tls"}, {"port": 80, "$patch": "delete"}]}}
    status, patched = await call(http, "PATCH", "/api/v1/namespaces/default/services/s", patch,
                                 "application/strategic-merge-patch+json")
    assert status == 200
    assert patched["spec"]["ports"] == [{"port": 443, "name": "tls", "protocol": "TCP", "targetPort": 443}]
    applied = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n"
    status, created = await call(http, "PATCH", CMS + "/ssa?fieldManager=me", raw=applied.encode(),
                                 content_type="application/apply-patch+yaml")
    assert status == 200 and created["data"] == {"a": "1"}
    status, conflict = await call(http, "PATCH", CMS + "/ssa?fieldManager=other", raw=applied.replace("'1'", "'2'")
                                  .encode(), content_type="application/apply-patch+yaml")
    assert status == 409 and conflict["details"]["causes"][0]["field"] == ".data.a"


async def test_admin_faults(server: KubeHTTPServer, http: aiohttp.ClientSession) -> None:
    status, _ = await call(http, "POST", "/_sim/throttle", {"seconds": 30, "retryAfter": 3})
    assert status == 200
    async with http.get(CMS) as response:
        assert response.status == 429 and response.headers["Retry-After"] == "3"
    await call(http, "POST", "/_sim/clear", {})
    await call(http, "POST", "/_sim/outage", {"seconds": 30})
    status, body = await call(http, "GET", CMS)
    assert status == 503 and body["reason"] == "ServiceUnavailable"
    await call(http, "POST", "/_sim/clear", {})
    await call(http, "POST", "/_sim/conflicts", {"resource": "configmaps", "count": 1})
    status, _ = await call(http, "POST", CMS, {"metadata": {"name": "a"}})
    assert status == 409
    status, _ = await call(http, "POST", CMS, {"metadata": {"name": "a"}})
    assert status == 201
    status, loaded = await call(http, "POST", "/_sim/load", raw=b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                b"  name: loaded\n  namespace: default\n", content_type="application/yaml")
    assert loaded == {"created": ["ConfigMap/loaded"]}
    # A window far longer than the test: the refused connection cannot race its end.
    await call(http, "POST", "/_sim/refuse", {"seconds": 3600})
    async with aiohttp.ClientSession() as fresh:
        with pytest.raises(aiohttp.ClientConnectionError):
            await fresh.get(server.url + CMS)
        await server.reopen()
        async with fresh.get(server.url + CMS) as response:
            assert response.status == 200


async def test_refuse_window_ends_by_itself(server: KubeHTTPServer) -> None:
    await server.refuse(0.05)  # refusing itself is shown by test_admin_faults, with a window that cannot end early
    await asyncio.wait_for(server.listening(), 20)  # waits for the reopening, whatever the wall time
    assert not server.api.faults.refusing()
    async with aiohttp.ClientSession() as fresh, fresh.get(server.url + CMS) as response:
        assert response.status == 200


async def test_drop_watches_cuts_http_streams(server: KubeHTTPServer, http: aiohttp.ClientSession) -> None:
    async with http.get(f"{CMS}?watch=true&resourceVersion={server.api.resource_version}") as response:
        await async_wait_until(lambda: server.api.watcher_count() == 1, what="the watch")
        server.api.drop_watches()
        with pytest.raises(aiohttp.ClientPayloadError):
            await response.read()


async def test_unauthorized_window(http: aiohttp.ClientSession) -> None:
    await call(http, "POST", "/_sim/unauthorized", {"seconds": 30})
    status, body = await call(http, "GET", CMS)
    assert (status, body["reason"]) == (401, "Unauthorized")
    await call(http, "POST", "/_sim/clear", {})
    status, _ = await call(http, "GET", CMS)
    assert status == 200


async def test_errors_do_not_echo_secret_material(http: aiohttp.ClientSession) -> None:
    secrets = "/api/v1/namespaces/default/secrets"
    status, answer = await call(http, "POST", secrets, raw=b"stringData:\n  token: hunter2-secret\n  bad: [\n",
                                content_type="application/yaml")
    assert status == 400 and "line" in answer["message"] and "hunter2" not in answer["message"]
    body = {"metadata": {"name": "s", "annotations": {"x": {"token": "hunter2-secret"}}}}
    status, answer = await call(http, "POST", secrets, body)
    assert status == 400 and "annotations" in answer["message"] and "hunter2" not in json.dumps(answer)


async def test_admin_arguments_are_validated(http: aiohttp.ClientSession) -> None:
    status, answer = await call(http, "POST", "/_sim/conflicts", {"resource": "configmaps", "count": 0})
    assert status == 400 and "count" in answer["message"]
    status, answer = await call(http, "POST", "/_sim/outage", {"seconds": 5, "bogus": 1})
    assert status == 400 and "bogus" in answer["message"]
    status, answer = await call(http, "POST", "/_sim/nope", {})
    assert status == 404 and "compact" in answer["message"]
    status, faults = await call(http, "GET", "/_sim/faults")
    assert status == 200 and faults["outage"] == 0 and faults["conflicts"] == {}


async def test_streaming_list_sends_initial_events_then_a_marked_bookmark(http: aiohttp.ClientSession) -> None:
    for name in ("b", "a"):
        await call(http, "POST", CMS, {"metadata": {"name": name}})
    query = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    events = await watch_lines(http, query, 3)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:2]] == [("ADDED", "a"), ("ADDED", "b")]
    assert events[2]["type"] == "BOOKMARK"
    assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_request_log(server: KubeHTTPServer, http: aiohttp.ClientSession) -> None:
    await call(http, "GET", CMS + "?limit=1")
    await call(http, "GET", CMS + "/missing")
    status, log = await call(http, "GET", "/_sim/requests")
    assert status == 200
    assert log["requests"][-2:] == [{"method": "GET", "path": CMS + "?limit=1", "status": 200},
                                    {"method": "GET", "path": CMS + "/missing", "status": 404}]
