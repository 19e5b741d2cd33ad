"""The webhook over real HTTPS on 127.0.0.1: AdmissionReview JSON in, decisions out, with real ``haproxy``."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from haptic.controller.metrics import ControllerMetrics
from haptic.live.certs import WebhookCerts, generate_webhook_certs, write_certs
from haptic.live.webhook_server import WebhookServer
from haptic.webhook.admission import AdmissionDecision, AdmissionHandler
from haptic.webhook.proposal_check import admission_validator
from tests.integration.haptic.webhook.test_admission_haproxy import _live_stores
from tests.support.admission import ingress, ingress_example, review

pytestmark = pytest.mark.haproxy

@pytest.fixture
def certs(tmp_path: Path) -> WebhookCerts:
    # The validity window must contain the real current time for the TLS handshake to succeed.
    return generate_webhook_certs(datetime.now(UTC), directory=tmp_path / "certs")


@pytest.fixture
async def served(certs: WebhookCerts, haproxy_bin: str) -> AsyncIterator[tuple[WebhookServer, ControllerMetrics,
                                                                               list[AdmissionDecision]]]:
    config = ingress_example()
    validator = admission_validator(config.spec, _live_stores(config), haproxy_bin)
    decisions: list[AdmissionDecision] = []
    handler = AdmissionHandler(validator, observers=[decisions.append])
    metrics = ControllerMetrics()
    assert certs.cert_path is not None and certs.key_path is not None
    server = WebhookServer(handler.review, certfile=certs.cert_path, keyfile=certs.key_path, port=0, metrics=metrics)
    await server.start()
    try:
        yield server, metrics, decisions
    finally:
        await server.stop()


def _client(certs: WebhookCerts, **kwargs: object) -> httpx.AsyncClient:
    context = ssl.create_default_context(cadata=certs.ca_pem.decode())
    return httpx.AsyncClient(verify=context, timeout=30, **kwargs)  # type: ignore[arg-type]


async def test_reviews_over_https(served: tuple[WebhookServer, ControllerMetrics, list[AdmissionDecision]],
                                  certs: WebhookCerts) -> None:
    server, metrics, decisions = served
    async with _client(certs) as http:
        health = await http.get(server.url.replace("/validate", "/healthz"))
        assert health.status_code == 200 and health.text == "ok"

        ok = await http.post(server.url, json=review("CREATE", ingress("api", service="api", port=9000), uid="a1"))
        assert ok.status_code == 200
        assert ok.json() == {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                             "response": {"uid": "a1", "allowed": True}}

        hostile = ingress("evil", path="/x\n    http-request deny")
        denied = await http.post(server.url, json=review("CREATE", hostile, uid="d1"))
        body = denied.json()["response"]
        assert body["uid"] == "d1" and body["allowed"] is False
        assert body["status"]["code"] == 403
        assert "Ingress shop/evil" in body["status"]["message"]
        assert "rules[0].http.paths[0].path" in body["status"]["message"]

        broken = await http.post(server.url, content=b"{not json", headers={"content-type": "application/json"})
        assert broken.status_code == 400 and "not JSON" in broken.json()["error"]
        wrong = await http.post(server.url, json={"apiVersion": "v1", "kind": "Status"})
        assert wrong.status_code == 400 and "AdmissionReview" in wrong.json()["error"]
        text = await http.post(server.url, content=b"{}", headers={"content-type": "text/plain"})
        assert text.status_code == 415
    assert [d.uid for d in decisions] == ["a1", "d1"]
    gvk = "networking.k8s.io/v1/Ingress"
    assert metrics.sample("haptic_webhook_requests_total", {"gvk": gvk, "result": "allowed"}) == 1
    assert metrics.sample("haptic_webhook_requests_total", {"gvk": gvk, "result": "denied"}) == 1
    assert metrics.sample("haptic_webhook_requests_total", {"gvk": "unknown", "result": "error"}) == 3
    assert metrics.sample("haptic_webhook_request_duration_seconds_count") == 5


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
async def test_tls_below_1_2_is_refused_and_unknown_ca_fails(
    served: tuple[WebhookServer, ControllerMetrics, list[AdmissionDecision]], certs: WebhookCerts, tmp_path: Path
) -> None:
    server, _, _ = served
    assert server.minimum_tls_version == ssl.TLSVersion.TLSv1_2
    old = ssl.create_default_context(cadata=certs.ca_pem.decode())
    old.minimum_version = ssl.TLSVersion.TLSv1
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    old.set_ciphers("DEFAULT@SECLEVEL=0")
    async with httpx.AsyncClient(verify=old) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(server.url.replace("/validate", "/healthz"))
    other = generate_webhook_certs(datetime.now(UTC))
    async with _client(other) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(server.url.replace("/validate", "/healthz"))


async def test_certificate_reload_serves_the_new_pair(
    served: tuple[WebhookServer, ControllerMetrics, list[AdmissionDecision]], certs: WebhookCerts
) -> None:
    server, _, _ = served
    assert certs.cert_path is not None
    rotated = write_certs(generate_webhook_certs(datetime.now(UTC)), certs.cert_path.parent)
    server.reload_certificates()
    async with _client(rotated) as http:
        assert (await http.get(server.url.replace("/validate", "/healthz"))).status_code == 200
    async with _client(certs) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(server.url.replace("/validate", "/healthz"))
