"""The live adapter's HTTP shape, against a scripted aiohttp server on 127.0.0.1.

These check exactly what goes on the wire (paths, queries, content types, auth) and how answers map
back to the port; the behavioural tests against the simulator's fake API server live beside them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from haptic.k8s.api import Conflict, Gone, Invalid, NotFound, ResourceRef, Selectors, Unavailable, WatchOptions
from haptic.live.kube_client import LiveKubeAPI, connect, resource_path

PODS = ResourceRef("v1", "pods", kind="Pod")
INGRESSES = ResourceRef("networking.k8s.io/v1", "ingresses", kind="Ingress")
CLASSES = ResourceRef("networking.k8s.io/v1", "ingressclasses", namespaced=False, kind="IngressClass")


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    authorization: str | None


@dataclass
class Script:
    seen: list[Seen] = field(default_factory=list)
    answer: Callable[[web.Request], web.StreamResponse] | None = None


def status(code: int, reason: str, message: str) -> web.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    return web.json_response(body, status=code)


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Script]]:
    script = Script()

    async def handle(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        script.seen.append(
            Seen(
                request.method,
                request.path,
                dict(request.query),
                request.headers.get("Content-Type", ""),
                json.loads(raw) if raw else None,
                request.headers.get("Authorization"),
            )
        )
        assert script.answer is not None
        return script.answer(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}", script
    await runner.cleanup()


@pytest.fixture
async def api(server: tuple[str, Script]) -> AsyncIterator[LiveKubeAPI]:
    adapter = await connect(host=server[0])
    yield adapter
    await adapter.close()


def test_resource_paths_cover_core_grouped_cluster_scoped_and_subresources() -> None:
    assert resource_path(PODS, "default", "web-0") == "/api/v1/namespaces/default/pods/web-0"
    assert resource_path(PODS, None) == "/api/v1/pods"
    assert resource_path(INGRESSES, "a b") == "/apis/networking.k8s.io/v1/namespaces/a%20b/ingresses"
    assert resource_path(CLASSES, "ignored", "haproxy") == "/apis/networking.k8s.io/v1/ingressclasses/haproxy"
    assert (
        resource_path(INGRESSES, "ns", "x", "status") == "/apis/networking.k8s.io/v1/namespaces/ns/ingresses/x/status"
    )


async def test_list_sends_selectors_limit_continue_and_fills_item_kinds(
    api: LiveKubeAPI, server: tuple[str, Script]
) -> None:
    _, script = server
    script.answer = lambda _: web.json_response(
        {
            "kind": "PodList",
            "metadata": {"resourceVersion": "42", "continue": "tok2"},
            "items": [{"metadata": {"name": "p"}}],
        }
    )
    page = await api.list(PODS, "web", Selectors("app in (a,b)", "metadata.name=p"), limit=1, continue_token="tok1")
    seen = script.seen[-1]
    assert (seen.method, seen.path) == ("GET", "/api/v1/namespaces/web/pods")
    assert seen.query == {
        "labelSelector": "app in (a,b)",
        "fieldSelector": "metadata.name=p",
        "limit": "1",
        "continue": "tok1",
    }
    assert page.resource_version == "42"
    assert page.continue_token == "tok2"
    assert page.items == [{"metadata": {"name": "p"}, "apiVersion": "v1", "kind": "Pod"}]


async def test_patch_types_map_to_content_types_and_apply_options(api: LiveKubeAPI, server: tuple[str, Script]) -> None:
    _, script = server
    script.answer = lambda _: web.json_response({"kind": "Ingress", "metadata": {"name": "x"}})
    await api.patch(INGRESSES, "x", {"a": 1}, "merge", namespace="ns")
    await api.patch(INGRESSES, "x", [{"op": "add", "path": "/a", "value": 1}], "json", namespace="ns")
    await api.patch(INGRESSES, "x", {"a": 1}, "strategic", namespace="ns")
    await api.patch(
        INGRESSES,
        "x",
        {"status": {}},
        "apply",
        namespace="ns",
        field_manager="haptic",
        force=True,
        subresource="status",
    )
    kinds = [s.content_type for s in script.seen]
    assert kinds == [
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ]
    assert script.seen[1].body == [{"op": "add", "path": "/a", "value": 1}]
    assert script.seen[3].path == "/apis/networking.k8s.io/v1/namespaces/ns/ingresses/x/status"
    assert script.seen[3].query == {"force": "true", "fieldManager": "haptic"}
    with pytest.raises(ValueError, match="field_manager"):
        await api.patch(INGRESSES, "x", {}, "apply", namespace="ns")


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [(404, "NotFound", NotFound), (409, "Conflict", Conflict), (410, "Expired", Gone), (422, "Invalid", Invalid)],
)
async def test_error_answers_map_to_port_errors(
    api: LiveKubeAPI, server: tuple[str, Script], code: int, reason: str, expected: type[Exception]
) -> None:
    _, script = server
    script.answer = lambda _: status(code, reason, f"it went {reason}")
    with pytest.raises(expected, match=f"it went {reason}"):
        await api.get(PODS, "p", "ns")


async def test_429_surfaces_retry_after(api: LiveKubeAPI, server: tuple[str, Script]) -> None:
    _, script = server

    def throttle(_: web.Request) -> web.Response:
        response = status(429, "TooManyRequests", "slow down")
        response.headers["Retry-After"] = "3"
        return response

    script.answer = throttle
    with pytest.raises(Unavailable) as caught:
        await api.replace(PODS, {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "1"}})
    assert caught.value.code == 429
    assert caught.value.retry_after == 3.0
    assert script.seen[-1].method == "PUT"


async def test_delete_returns_object_while_finalizers_hold_it_and_none_when_done(
    api: LiveKubeAPI, server: tuple[str, Script]
) -> None:
    _, script = server
    script.answer = lambda _: web.json_response({"kind": "Status", "status": "Success"})
    assert await api.delete(CLASSES, "haproxy") is None
    pending = {"kind": "IngressClass", "metadata": {"name": "haproxy", "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    script.answer = lambda _: web.json_response({"kind": "IngressClass", "metadata": {"name": "haproxy"}})
    assert await api.delete(CLASSES, "haproxy") is None  # the last state of an object gone at once
    script.answer = lambda _: web.json_response(pending)
    assert await api.delete(CLASSES, "haproxy") == pending
    assert script.seen[-1].path == "/apis/networking.k8s.io/v1/ingressclasses/haproxy"


def _stream(lines: list[dict[str, Any]]) -> Callable[[web.Request], web.Response]:
    def answer(_: web.Request) -> web.Response:
        return web.Response(body="".join(json.dumps(x) + "\n" for x in lines).encode(), content_type="application/json")

    return answer


async def test_watch_yields_events_bookmarks_and_an_in_stream_410_then_ends(
    api: LiveKubeAPI, server: tuple[str, Script]
) -> None:
    _, script = server
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version: 5 (9)"}
    script.answer = _stream(
        [
            {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "a", "resourceVersion": "6"}}},
            {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "8"}}},
            {"type": "ERROR", "object": gone},
            {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "never"}}},
        ]
    )
    options = WatchOptions(resource_version="5", timeout_seconds=30, selectors=Selectors(label_selector="app=x"))
    events = [e async for e in api.watch(PODS, "ns", options)]
    assert [e.type for e in events] == ["ADDED", "BOOKMARK", "ERROR"]
    assert events[2].object["code"] == 410
    assert script.seen[-1].query == {
        "watch": "true",
        "allowWatchBookmarks": "true",
        "resourceVersion": "5",
        "timeoutSeconds": "30",
        "labelSelector": "app=x",
    }


async def test_watch_can_raise_gone_instead(server: tuple[str, Script]) -> None:
    url, script = server
    script.answer = _stream([{"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}}])
    api = await connect(host=url, watch_errors="raise")
    try:
        with pytest.raises(Gone):
            [e async for e in api.watch(PODS, None, WatchOptions(resource_version="1"))]
    finally:
        await api.close()
    assert script.seen[-1].path == "/api/v1/pods"


async def test_unreachable_server_is_unavailable() -> None:
    api = await connect(host="http://127.0.0.1:9")  # discard port: nothing listens
    try:
        with pytest.raises(Unavailable, match="unreachable"):
            await api.get(PODS, "p", "ns")
    finally:
        await api.close()


async def test_kubeconfig_token_is_sent_but_never_shown(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    token = "s3cr3t-t0ken-value"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": url}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ctx",
            }
        )
    )
    script.answer = lambda _: web.json_response({"kind": "Pod", "metadata": {"name": "p"}})
    api = await connect(kubeconfig=str(kubeconfig))
    try:
        assert (await api.get(PODS, "p", "ns"))["metadata"]["name"] == "p"
        assert token not in repr(api)
    finally:
        await api.close()
    assert script.seen[-1].authorization == f"Bearer {token}"
