"""The webhook ASGI app without sockets: timeouts, size limits, metrics for bad requests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from haptic.controller.metrics import ControllerMetrics
from haptic.live.webhook_server import build_webhook_app
from haptic.webhook.admission import AdmissionDecision, AdmissionHandler
from tests.support.admission import ingress, review


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://webhook")


async def test_slow_review_answers_504_and_counts_an_error() -> None:
    async def slow(body: Any) -> AdmissionDecision:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    metrics = ControllerMetrics()
    async with client(build_webhook_app(slow, metrics=metrics, request_timeout=0.01)) as http:
        answer = await http.post("/validate", json=review("CREATE", ingress("web")))
    assert answer.status_code == 504 and "no answer within 0.01s" in answer.json()["error"]
    assert metrics.sample("haptic_webhook_requests_total", {"gvk": "unknown", "result": "error"}) == 1


async def test_oversized_body_is_refused_before_review() -> None:
    reviewed: list[Any] = []
    handler = AdmissionHandler(observers=[reviewed.append])
    async with client(build_webhook_app(handler.review, max_body=1000)) as http:
        big = review("CREATE", ingress("web", annotations={"x": "y" * 2000}))
        answer = await http.post("/validate", json=big)
        assert answer.status_code == 413
        small = await http.post("/validate", json=review("CREATE", ingress("web")))
        assert small.status_code == 200 and small.json()["response"]["allowed"] is True
        assert (await http.get("/validate")).status_code == 405
    assert len(reviewed) == 1


async def test_deeply_nested_and_non_utf8_bodies_get_400_with_a_message() -> None:
    handler = AdmissionHandler()
    headers = {"content-type": "application/json"}
    async with client(build_webhook_app(handler.review, max_body=10_000_000)) as http:
        deep = await http.post("/validate", content=b"[" * 100_000 + b"]" * 100_000, headers=headers)
        assert deep.status_code == 400 and "nests deeper than" in deep.json()["error"]
        # Decodes fine, but deeper than anything walking it recursively should follow.
        text = json.dumps(review("CREATE", {**ingress("web"), "spec": "SPEC"}))
        body = text.replace('"SPEC"', '{"x": ' * 2000 + "{}" + "}" * 2000).encode()
        fairly_deep = await http.post("/validate", content=body, headers=headers)
        assert fairly_deep.status_code == 400 and "nests deeper than 1000 levels" in fairly_deep.json()["error"]
        latin1 = await http.post("/validate", content='{"kind": "Ingr\xe9ss"}'.encode("latin-1"), headers=headers)
        assert latin1.status_code == 400
        assert latin1.json()["error"] == "body is not valid UTF-8 (byte 0xe9 at offset 14)"
