"""``haptic run --webhook-cert-dir``: the process serves the validating webhook, registers it with the
fake API (admission enabled, served over HTTP on 127.0.0.1) and ``kubectl apply`` goes through it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from haptic.config.crds import all_crds
from haptic.live.certs import generate_webhook_certs
from simulator.cluster_objects import credentials_secret, endpoint_slice, ingress, ingress_library_config, service
from simulator.kube import BackgroundServer, FakeKubeAPI, write_kubeconfig
from simulator.kube.admission import enable_admission
from tests.integration.haptic.controller.test_run_command import _free_port, _until

pytestmark = [pytest.mark.kubectl, pytest.mark.haproxy]

WEBHOOK_NAME = "ingresses.networking.k8s.io.validate.haproxy-haptic.org"


def _admitting_api() -> FakeKubeAPI:
    api = FakeKubeAPI()
    enable_admission(api)
    return api


def _seed(api: FakeKubeAPI) -> None:
    crd_type = api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in all_crds().values():
        api.create(crd_type, None, crd)
    namespaces = api.resolve("v1", "namespaces")
    api.create(namespaces, None, {"metadata": {"name": "haptic"}})
    for obj, namespace in [
        (ingress_library_config(leader_election=False), "haptic"),
        (credentials_secret("admin", "s3cret-value"), "haptic"),
        (service("web"), "default"),
        (endpoint_slice("web", ["10.0.0.1"]), "default"),
    ]:
        kind = api.types.by_kind(obj["apiVersion"], obj["kind"])
        assert kind is not None
        api.create(kind, namespace, obj)


def _registered(api: FakeKubeAPI) -> list[dict[str, Any]]:
    kind = api.resolve("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations")
    return [w for cfg in api.objects(kind) for w in cfg.get("webhooks", [])]


def _kubectl(kubectl_bin: str, home: Path, kubeconfig: Path, *args: str, stdin: str) -> tuple[int, str, str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)}
    done = subprocess.run([kubectl_bin, "--cache-dir", str(home / "cache"), "--request-timeout", "30s", *args],
                          input=stdin, capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_run_serves_the_webhook_and_kubectl_goes_through_it(
    tmp_path: Path, haproxy_bin: str, kubectl_bin: str
) -> None:
    certs = generate_webhook_certs(datetime.now(UTC), directory=tmp_path / "certs")
    assert certs.cert_path is not None
    with BackgroundServer(_admitting_api) as server:
        server.call(_seed)
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        webhook_port = _free_port()
        haptic = Path(sys.executable).parent / "haptic"
        env = dict(os.environ, POD_NAMESPACE="haptic", POD_NAME="controller-a", LOG_LEVEL="INFO",
                   WEBHOOK_CERT_DIR=str(tmp_path / "certs"))
        proc = subprocess.Popen(
            [str(haptic), "run", "--server", server.url, "--debug-port", "0", "--metrics-port", "0",
             "--bind-address", "127.0.0.1", "--haproxy-binary", haproxy_bin, "--webhook-port", str(webhook_port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        )
        try:
            hooks = _until(lambda: server.call(_registered), "the webhook registration", proc=proc)
            # the Ingresses' webhook, and the one reviewing the controller's own config
            assert [h["name"] for h in hooks] == [WEBHOOK_NAME,
                                                  "haproxytemplateconfigs.haproxy-haptic.org.validate.haproxy-haptic.org"]
            assert hooks[0]["clientConfig"]["url"] == f"https://127.0.0.1:{webhook_port}/validate"
            assert hooks[0]["clientConfig"]["caBundle"] == certs.ca_bundle

            hostile = ingress("evil", "evil.example", "web", path="/x y")
            code, _, err = _kubectl(kubectl_bin, tmp_path, kubeconfig, "apply", "-f", "-",
                                    stdin=yaml.safe_dump(hostile))
            assert code != 0
            assert f'admission webhook "{WEBHOOK_NAME}" denied the request' in err, err
            assert "Ingress default/evil" in err and "rules[0].http.paths[0].path" in err, err

            good = ingress("shop", "shop.example", "web")
            code, out, err = _kubectl(kubectl_bin, tmp_path, kubeconfig, "apply", "-f", "-",
                                      stdin=yaml.safe_dump(good))
            assert code == 0, err
            assert "ingress.networking.k8s.io/shop created" in out

            names = server.call(lambda api: sorted(
                o["metadata"]["name"] for o in api.objects(api.resolve("networking.k8s.io/v1", "ingresses"))))
            assert names == ["shop"], "the denied Ingress was never stored"

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            output = proc.communicate()[0]
        assert f"serving the validating webhook at https://127.0.0.1:{webhook_port}/validate" in output
        assert "s3cret-value" not in output


def test_run_without_cert_dir_logs_the_webhook_is_off(tmp_path: Path) -> None:
    haptic = Path(sys.executable).parent / "haptic"
    env = {k: v for k, v in os.environ.items() if k != "WEBHOOK_CERT_DIR"}
    missing = subprocess.run(
        [str(haptic), "run", "--namespace", "haptic", "--webhook-cert-dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert missing.returncode == 2
    assert f"--webhook-cert-dir {tmp_path}: tls.crt is missing" in missing.stdout

    with BackgroundServer() as server:
        proc = subprocess.Popen(
            [str(haptic), "run", "--namespace", "haptic", "--server", server.url, "--debug-port", "0",
             "--metrics-port", "0", "--bind-address", "127.0.0.1"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        )
        try:
            assert proc.stdout is not None
            seen: list[str] = []
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                seen.append(line)
                if "validating webhook off" in line or not line:
                    break
            assert any("validating webhook off (no --webhook-cert-dir" in line for line in seen), seen
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
