"""``haptic run`` as a process against the fake Kubernetes API served over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from haptic.config.crds import all_crds
from simulator.cluster_objects import credentials_secret, template_config
from simulator.kube import BackgroundServer, FakeKubeAPI


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _until(predicate: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except OSError as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what} (last: {last!r})")


def _seed(api: FakeKubeAPI) -> None:
    crd_type = api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in all_crds().values():
        api.create(crd_type, None, crd)
    api.create(api.resolve("v1", "namespaces"), None, {"metadata": {"name": "haptic"}})


def test_run_waits_then_leads_then_stops_gracefully(tmp_path: Path) -> None:
    with BackgroundServer() as server:
        server.call(_seed)
        port = _free_port()
        haptic = Path(sys.executable).parent / "haptic"
        env = dict(os.environ, POD_NAMESPACE="haptic", POD_NAME="controller-a", LOG_LEVEL="INFO")
        proc = subprocess.Popen(
            [str(haptic), "run", "--server", server.url, "--debug-port", str(port), "--metrics-port", "0",
             "--bind-address", "127.0.0.1"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            waiting = _until(lambda: _get(f"{base}/debug/vars/iterations")[1], "the debug server")
            _until(lambda: "HAProxyTemplateConfig haptic/haproxy-config" in
                   str(_get(f"{base}/debug/vars/iterations")[1].get("waiting_for")), "waiting for the config")
            status, health = _get(f"{base}/healthz")
            assert status == 503 and "HAProxyTemplateConfig" in json.dumps(health)
            assert waiting["count"] == 0

            def create(obj: dict[str, Any]) -> None:
                def go(api: FakeKubeAPI) -> None:
                    kind = api.types.by_kind(obj["apiVersion"], obj["kind"])
                    assert kind is not None
                    api.create(kind, "haptic", obj)

                server.call(go)

            create(template_config(leader_election=True))
            create(credentials_secret("admin", "s3cret-value"))
            _until(lambda: _get(f"{base}/debug/vars/leader")[1].get("is_leader"), "leadership", timeout=60)
            assert _get(f"{base}/debug/vars/iterations")[1]["count"] == 1
            everything = json.dumps(_get(f"{base}/debug/vars/all")[1])
            assert "s3cret-value" not in everything
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
            lease = server.call(lambda api: api.get(api.resolve("coordination.k8s.io/v1", "leases"), "haptic",
                                                    "haptic-leader"))
            assert not lease["spec"].get("holderIdentity"), "a graceful stop releases the Lease"
        finally:
            if proc.poll() is None:
                proc.kill()
            output = proc.communicate()[0]
        assert "waiting for HAProxyTemplateConfig haptic/haproxy-config" in output
        assert "s3cret-value" not in output
