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
from simulator.local.network import LoopbackNetwork


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _free_address(count: int = 1) -> tuple[str, list[int]]:
    """An address of 127.0.0.0/8 of this test's own and ``count`` ports free on it: on 127.0.0.1 a port
    chosen and released can be bound by any other test's server before the controller binds it."""
    network = LoopbackNetwork()
    host = network.controller_ip(0)
    ports: list[int] = []
    for _ in range(count):
        ports.append(network.free_port([host], avoid=ports))
    return host, ports


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _create(server: BackgroundServer, obj: dict[str, Any]) -> None:
    """Creates ``obj`` in the haptic namespace of the fake API ``server`` runs."""

    def go(api: FakeKubeAPI) -> None:
        kind = api.types.by_kind(obj["apiVersion"], obj["kind"])
        assert kind is not None
        api.create(kind, "haptic", obj)

    server.call(go)


def _until(predicate: Any, what: str, timeout: float = 60.0, proc: subprocess.Popen[str] | None = None) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            output, _ = proc.communicate()
            pytest.fail(f"haptic run exited with {proc.returncode} while waiting for {what}: {output[-2000:]}")
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


def _text(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _leader_gauge(metrics_text: str) -> str | None:
    for line in metrics_text.splitlines():
        if line.startswith("haptic_leader_election_is_leader "):
            return line.split()[1]
    return None


def test_run_serves_health_metrics_through_reinit_and_stops_gracefully(tmp_path: Path, haproxy_bin: str) -> None:
    with BackgroundServer() as server:
        server.call(_seed)
        host, (port, metrics_port) = _free_address(2)
        haptic = Path(sys.executable).parent / "haptic"
        env = dict(os.environ, POD_NAMESPACE="haptic", POD_NAME="controller-a", LOG_LEVEL="INFO")
        proc = subprocess.Popen(
            [str(haptic), "run", "--server", server.url, "--debug-port", str(port), "--metrics-port",
             str(metrics_port), "--bind-address", host, "--haproxy-binary", haproxy_bin,
             "--shutdown-timeout", "10"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        )
        try:
            base, metrics_base = f"http://{host}:{port}", f"http://{host}:{metrics_port}"
            waiting = _until(lambda: _get(f"{base}/debug/vars/iterations")[1], "the debug server", proc=proc)
            _until(lambda: "HAProxyTemplateConfig haptic/haproxy-config" in
                   str(_get(f"{base}/debug/vars/iterations")[1].get("waiting_for")), "waiting for the config")
            # Waiting is alive (no restart by the kubelet) but not ready, and says what it waits for.
            status, health = _get(f"{base}/healthz")
            assert status == 200 and "waiting for HAProxyTemplateConfig" in json.dumps(health)
            status, ready = _get(f"{base}/readyz")
            assert status == 503 and "HAProxyTemplateConfig" in json.dumps(ready)
            assert waiting["count"] == 0
            assert _text(f"{metrics_base}/metrics")[0] == 200

            def create(obj: dict[str, Any]) -> None:
                _create(server, obj)

            create(template_config(leader_election=True))
            create(credentials_secret("admin", "s3cret-value"))
            _until(lambda: _get(f"{base}/debug/vars/leader")[1].get("is_leader"), "leadership", timeout=60)
            assert _get(f"{base}/debug/vars/iterations")[1]["count"] == 1
            status, ready = _until(lambda: (r := _get(f"{base}/readyz"))[0] == 200 and r, "readiness")
            assert ready["components"]["leadership"] == {"status": "running", "healthy": True, "reason": "leader"}
            assert ready["components"]["watcher:ingresses"]["status"] == "running"
            assert _get(f"{base}/healthz")[0] == 200
            _until(lambda: _leader_gauge(_text(f"{metrics_base}/metrics")[1]) == "1.0", "the leader gauge")
            everything = json.dumps(_get(f"{base}/debug/vars/all")[1])
            assert "s3cret-value" not in everything

            # A config change reinitializes in the process: the same two servers keep answering.
            def bump(api: FakeKubeAPI) -> None:
                kind = api.types.by_kind("haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig")
                assert kind is not None
                current = api.get(kind, "haptic", "haproxy-config")
                changed = template_config(leader_election=True, slots=4)
                changed["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                api.update(kind, "haptic", "haproxy-config", changed)

            server.call(bump)
            _until(lambda: _get(f"{base}/debug/vars/iterations")[1]["count"] == 2, "reinitialization", timeout=60)
            _until(lambda: _get(f"{base}/readyz")[0] == 200, "readiness after reinitialization", timeout=60)
            _until(lambda: _leader_gauge(_text(f"{metrics_base}/metrics")[1]) == "1.0",
                   "the leader gauge after reinitialization")
            assert proc.poll() is None, "no process restart"

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
        assert "reinitializing for a new configuration" in output
        assert output.count(f"serving http://{host}:") == 2, "one debug and one metrics server for the process"
        assert output.rstrip().splitlines()[-1].endswith("logger=haptic.run msg=stopped"), output[-500:]
        assert "s3cret-value" not in output


def test_a_taken_debug_port_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    haptic = Path(sys.executable).parent / "haptic"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        env = dict(os.environ, POD_NAMESPACE="haptic", POD_NAME="controller-a")
        done = subprocess.run(
            [str(haptic), "run", "--server", "http://127.0.0.1:1", "--debug-port", str(port), "--metrics-port", "0",
             "--bind-address", "127.0.0.1"],
            env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60,
        )
    assert done.returncode == 1
    assert f"debug-server cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
