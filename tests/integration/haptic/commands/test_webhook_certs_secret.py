"""`haptic webhook certs --secret` (what deploy/webhook-certs-job.yaml runs) against the fake API over
HTTP, through the official client: it creates the Secret, keeps one that serves, replaces one that
does not."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from haptic.cli import main
from haptic.live.certs import generate_webhook_certs, service_dns_names
from haptic.preflight.certificates import inspect_certificate
from simulator.kube import BackgroundServer, FakeKubeAPI

NS, NAME = "haptic-system", "haproxy-webhook-certs"


def _type(api: FakeKubeAPI, kind: str) -> Any:
    rt = api.types.by_kind("v1", kind)
    assert rt is not None
    return rt


@pytest.fixture
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer(FakeKubeAPI) as running:
        running.call(lambda api: api.create(_type(api, "Namespace"), None, {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        yield running


def secret(server: BackgroundServer) -> dict[str, bytes]:
    stored = server.call(lambda api: api.get(_type(api, "Secret"), NS, NAME))
    assert stored["type"] == "kubernetes.io/tls"
    return {k: base64.b64decode(v) for k, v in stored["data"].items()}


def run(server: BackgroundServer, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["webhook", "certs", "--secret", f"{NS}/{NAME}", "--server", server.url,
                 "--service", "haptic-controller-webhook", "--namespace", NS])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_creates_keeps_and_replaces(server: BackgroundServer, capsys: pytest.CaptureFixture[str]) -> None:
    names = service_dns_names("haptic-controller-webhook", NS)
    assert run(server, capsys).startswith(f"wrote Secret {NS}/{NAME}")
    first = secret(server)
    report = inspect_certificate(first["tls.crt"], now=datetime.now(UTC), dns_names=names, ca_pem=first["ca.crt"],
                                 key_pem=first["tls.key"])
    assert report.ok, report.problems
    assert run(server, capsys).startswith("kept Secret")
    assert secret(server) == first
    # one about to expire (and naming another Service) is replaced
    stale = generate_webhook_certs(datetime.now(UTC) - timedelta(days=360), ["old"], ())
    data = {"tls.crt": stale.cert_pem, "tls.key": stale.key_pem, "ca.crt": stale.ca_pem}

    def age(api: FakeKubeAPI) -> None:
        stored = copy.deepcopy(api.get(_type(api, "Secret"), NS, NAME))  # the store's own object
        stored["data"] = {k: base64.b64encode(v).decode() for k, v in data.items()}
        api.update(_type(api, "Secret"), NS, NAME, stored)

    server.call(age)
    assert f"replacing Secret {NS}/{NAME}: expires at" in run(server, capsys)
    assert secret(server)["tls.crt"] not in (stale.cert_pem, first["tls.crt"])
