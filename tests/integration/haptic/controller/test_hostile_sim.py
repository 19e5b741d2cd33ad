"""Hostile and failing objects through the whole controller, and secrets kept out of every output."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import httpx
import pytest

from haptic.live.debug_server import build_debug_app
from simulator.cluster_objects import endpoint_slice, ingress, ingress_library_config, service, tls_secret
from tests.integration.haptic.controller.conftest import add_app, backend, routed
from tests.support.certs import make_pem

pytestmark = pytest.mark.looptime

PASSWORD = "Dataplane-Pa55word-xyz"


def _ingress_watch_with_field_selector() -> dict[str, Any]:
    return {"watchedResources": {"ingresses": {
        "apiVersion": "networking.k8s.io/v1", "resources": "ingresses",
        "indexBy": ["metadata.namespace", "metadata.name"],
        "fieldSelector": "metadata.namespace!=quarantine"}}}


async def test_hostile_and_unselected_ingresses_are_skipped_and_named(make_harness: Any,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="haptic")
    h = await make_harness(config=ingress_library_config(extra_spec=_ingress_watch_with_field_selector()))
    h.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "quarantine"}})
    add_app(h, "web", "web.example", ["10.1.0.1"])
    # The API server refuses hosts that are not DNS names; paths it checks for little more than a leading "/".
    h.apply(ingress("evil-path", "evil.test", "web", path="/x\n    http-request deny"))
    h.apply(ingress("evil-annotation", "ok2.example", "web",
                    annotations={"haproxy-haptic.org/timeout-server": "5s\n    server evil 6.6.6.6:80"}))
    h.apply(service("web", "quarantine"))
    h.apply(endpoint_slice("web", ["10.9.0.1"], "quarantine"))
    h.apply(ingress("q", "q.example", "web", "quarantine"))
    await h.settle()
    for pod in (0, 1):
        config = h.deployed_config(pod)
        assert f"backend {backend('web')}" in config and routed(h, pod, "web.example", "web")
        assert "evil" not in config and "6.6.6.6" not in config and "http-request deny" not in config
        assert "ing_quarantine" not in config and "10.9.0.1" not in config
    messages = [r.getMessage() for r in caplog.records]
    assert any("skipping Ingress 'default'/'evil-path'" in m and "unsafe characters" in m for m in messages), messages
    assert any("skipping Ingress 'default'/'evil-annotation'" in m for m in messages)
    assert any("skipping ingresses quarantine/q: does not match the field selector" in m for m in messages)
    h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))  # another render, same hostile objects
    await h.settle()
    messages = [r.getMessage() for r in caplog.records]
    assert sum("'default'/'evil-path'" in m for m in messages) == 1, "said once, not on every render"
    assert h.template_config()["status"]["validationStatus"] == "Valid"


def _secret_strings(key_pem: str) -> list[str]:
    body = [line for line in key_pem.strip().splitlines() if not line.startswith("-----")]
    return [PASSWORD, base64.b64encode(PASSWORD.encode()).decode(), base64.b64encode(key_pem.encode()).decode(),
            *body]


async def test_secrets_never_reach_logs_trace_or_debug_endpoints(make_harness: Any,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    h = await make_harness(password=PASSWORD)
    pem = make_pem("shop.example", 1)
    cert_pem, key_pem = pem.split("-----BEGIN PRIVATE KEY-----")
    key_pem = "-----BEGIN PRIVATE KEY-----" + key_pem
    h.apply(tls_secret("shop-tls", cert_pem, key_pem))
    add_app(h, "web", "web.example", ["10.1.0.1"])
    h.apply(ingress("shop", "shop.example", "web", tls_secret="shop-tls"))
    await h.settle()
    h.rotate_credentials(PASSWORD + "-rotated")
    h.apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))
    await h.settle()
    # The run really used both secrets.
    assert "frontend https" in h.deployed_config(0)
    assert key_pem.strip() in (h.stored_file(0, "ssl_certificates", "default_shop-tls.pem") or "")
    assert not h.events("instance.deployment.failed")

    controller = h.replicas[0].controller
    transport = httpx.ASGITransport(app=build_debug_app(controller.debug_providers()))
    async with httpx.AsyncClient(transport=transport, base_url="http://debug") as client:
        outputs = {path: (await client.get(path)).text for path in (
            "/debug/vars/all", "/debug/vars/rendered", "/debug/vars/auxfiles", "/debug/vars/config",
            "/debug/vars/credentials", "/debug/events?limit=1000", "/metrics")}
    assert json.loads(outputs["/debug/events?limit=1000"])["count"] > 20
    outputs["trace"] = h.trace_jsonl()
    outputs["logs"] = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    for secret in [*_secret_strings(key_pem), PASSWORD + "-rotated"]:
        for where, text in outputs.items():
            assert secret not in text, f"secret material in {where}"
    for where, text in outputs.items():
        assert "PRIVATE KEY" not in text, f"a private key in {where}"
