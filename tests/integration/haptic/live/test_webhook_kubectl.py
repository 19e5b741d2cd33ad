"""``kubectl apply`` against the fake API, which calls the controller's webhook over HTTPS before persisting.

Everything runs in one event loop (fake API, webhook server, ``haproxy -c``); kubectl is a subprocess.
The webhook registration is the controller's own ``ValidatingWebhookConfiguration``, applied through
the ``KubeAPI`` port.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from haptic.k8s.api import ApiError, ResourceRef
from haptic.k8s.store import ResourceStore
from haptic.live.certs import generate_webhook_certs
from haptic.live.webhook_server import WebhookServer
from haptic.webhook.admission import AdmissionValidator
from haptic.webhook.configuration import sync_webhook_configuration
from haptic.webhook.proposal_check import DryRunCheck
from simulator.kube import FakeKubeAPI, InProcessKubeClient, serve, write_kubeconfig
from simulator.kube.admission import WebhookAdmission, enable_admission
from tests.support.admission import ingress, ingress_example

pytestmark = [pytest.mark.kubectl, pytest.mark.haproxy]

INGRESSES = ResourceRef("networking.k8s.io/v1", "ingresses", True, "Ingress")


@dataclass
class Cluster:
    api: FakeKubeAPI
    admission: WebhookAdmission
    kubectl_bin: str
    kubeconfig: Path
    home: Path
    stores: dict[str, ResourceStore]

    async def kubectl(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.home)}
        proc = await asyncio.create_subprocess_exec(
            self.kubectl_bin, "--cache-dir", str(self.home / "cache"), "--request-timeout", "30s", *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
        return proc.returncode or 0, out.decode(), err.decode()

    def stored(self, name: str) -> dict[str, Any] | None:
        rt = self.api.resolve("networking.k8s.io/v1", "ingresses")
        return next((o for o in self.api.objects(rt) if o["metadata"]["name"] == name), None)


@pytest.fixture
async def cluster(kubectl_bin: str, haproxy_bin: str, tmp_path: Path) -> AsyncIterator[Cluster]:
    config = ingress_example()
    api = FakeKubeAPI()
    admission = enable_admission(api)
    api.create(api.resolve("v1", "namespaces"), None, {"metadata": {"name": "shop"}})
    stores = config.spec.make_stores()
    # The objects the controller's watchers would have listed: the example's shared fixtures.
    for name, objects in config.spec.validation_tests["_global"].fixtures.items():
        watched = config.spec.watched_resources[name]
        rt = api.resolve(watched.api_version, watched.resources)
        for obj in objects:
            stores[name].apply(api.create(rt, "shop", obj))
    certs = generate_webhook_certs(datetime.now(UTC), directory=tmp_path / "certs")
    assert certs.cert_path is not None and certs.key_path is not None
    validator = AdmissionValidator.from_spec(config.spec, stores, DryRunCheck.from_spec(config.spec, haproxy_bin))
    webhook = WebhookServer(validator.review, certfile=certs.cert_path, keyfile=certs.key_path, port=0)
    await webhook.start()
    http = await serve(api)
    try:
        await sync_webhook_configuration(InProcessKubeClient(api), config.spec.watched_resources, certs.ca_bundle,
                                         url=webhook.url)
        yield Cluster(api, admission, kubectl_bin, write_kubeconfig(tmp_path / "kubeconfig", http.url), tmp_path,
                      stores)
    finally:
        await http.stop()
        await webhook.stop()


async def test_kubectl_apply_is_rejected_by_the_webhook(cluster: Cluster) -> None:
    code, out, err = await cluster.kubectl("get", "validatingwebhookconfigurations", "-o", "name")
    assert code == 0 and "haptic-validating-webhook" in out, err

    slow = ingress("slow", annotations={"haproxy-haptic.org/timeout-server": "999999999d"})
    code, _, err = await cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(slow))
    assert code != 0
    assert 'admission webhook "ingresses.networking.k8s.io.validate.haproxy-haptic.org" denied the request' in err
    assert "Ingress shop/slow" in err and "timer overflow" in err
    assert cluster.stored("slow") is None

    hostile = ingress("evil", path="/x y")
    code, _, err = await cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(hostile))
    assert code != 0 and "rules[0].http.paths[0].path" in err
    assert cluster.stored("evil") is None

    code, out, err = await cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(ingress("api", service="api",
                                                                                            port=9000)))
    assert code == 0, err
    assert "ingress.networking.k8s.io/api created" in out
    assert cluster.stored("api") is not None


async def test_updates_are_reviewed_too_and_other_kinds_are_not(cluster: Cluster) -> None:
    code, _, err = await cluster.kubectl(
        "annotate", "-n", "shop", "ingress", "web", "haproxy-haptic.org/timeout-server=999999999d"
    )
    assert code != 0 and "timer overflow" in err
    stored = cluster.stored("web")
    assert stored is not None and "annotations" not in stored["metadata"]
    calls = cluster.admission.calls
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "shop", "name": "plain"}}
    code, _, err = await cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(configmap))
    assert code == 0, err
    assert cluster.admission.calls == calls
    code, _, err = await cluster.kubectl("annotate", "-n", "shop", "ingress", "web",
                                         "haproxy-haptic.org/timeout-server=30s")
    assert code == 0, err
    stored = cluster.stored("web")
    assert stored is not None and stored["metadata"]["annotations"] == {"haproxy-haptic.org/timeout-server": "30s"}


async def test_in_process_client_writes_are_reviewed_as_well(cluster: Cluster) -> None:
    client = InProcessKubeClient(cluster.api)
    with pytest.raises(ApiError) as denied:
        await client.create(INGRESSES, ingress("evil", path="/x y"), "shop")  # the API server lets such paths through
    assert denied.value.code == 403 and "rules[0].http.paths[0].path" in denied.value.message
    assert cluster.stored("evil") is None
    created = await client.create(INGRESSES, ingress("fine", host="fine.example.test"), "shop")
    assert created["metadata"]["name"] == "fine"
    with pytest.raises(ApiError, match="timer overflow"):
        await client.patch(INGRESSES, "fine", {"metadata": {"annotations": {
            "haproxy-haptic.org/timeout-server": "999999999d"}}}, "merge", namespace="shop")
