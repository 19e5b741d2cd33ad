"""deploy/ with the real tools this machine has: kustomize (kubectl's) builds it, kubectl applies it to
the fake Kubernetes API (server-side dry run, then for real), haproxy accepts the bootstrap config."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import httpx
import pytest
import yaml

from haptic.config.crds import all_crds
from simulator.kube import BackgroundServer, FakeKubeAPI, write_kubeconfig
from simulator.kube.gateway_api import gateway_api_crds
from simulator.local.pod import translate_for_pod
from tests.support.paths import REPO

pytestmark = pytest.mark.kubectl
DEPLOY = REPO / "deploy"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    with BackgroundServer(FakeKubeAPI) as server:
        yield write_kubeconfig(tmp_path / "kubeconfig", server.url)


def kubectl(kubectl_bin: str, kubeconfig: Path | None, *args: str) -> str:
    environment = {**os.environ, "KUBECONFIG": str(kubeconfig)} if kubeconfig else dict(os.environ)
    done = subprocess.run([kubectl_bin, *args], env=environment, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_kustomize_builds_every_object(kubectl_bin: str) -> None:
    built = [d for d in yaml.safe_load_all(kubectl(kubectl_bin, None, "kustomize", str(DEPLOY))) if d]
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in built)
    assert "HAProxyTemplateConfig/haptic-config" in kinds
    assert "Deployment/haptic-controller" in kinds and "Deployment/haproxy" in kinds
    assert len([k for k in kinds if k.startswith("CustomResourceDefinition/")]) == len(all_crds())
    config_maps = [d for d in built if d["kind"] == "ConfigMap"]
    assert len(config_maps) == 1 and config_maps[0]["metadata"]["name"].startswith("haproxy-dataplaneapi-")
    haproxy = next(d for d in built if d["kind"] == "Deployment" and d["metadata"]["name"] == "haproxy")
    volume = next(v for v in haproxy["spec"]["template"]["spec"]["volumes"] if v["name"] == "config")
    assert volume["configMap"]["name"] == config_maps[0]["metadata"]["name"]  # the hashed name is wired through
    assert {d["metadata"].get("labels", {}).get("app.kubernetes.io/part-of") for d in built} == {"haptic"}


def test_manifests_apply_to_the_fake_api(kubectl_bin: str, kubeconfig: Path) -> None:
    # CRDs and the namespace first, as on a real cluster (kinds must resolve, the namespace must exist).
    kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-f", str(DEPLOY / "crds"),
            "-f", str(DEPLOY / "namespace.yaml"))
    dry = kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "--dry-run=server", "-k", str(DEPLOY))
    assert "haproxytemplateconfig.haproxy-haptic.org/haptic-config created (server dry run)" in dry
    assert kubectl(kubectl_bin, kubeconfig, "get", "deployments", "-n", "haptic-system", "-o", "name") == ""
    # Client-side schema validation needs the OpenAPI document, which the fake does not serve.
    kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-k", str(DEPLOY))
    kinds = "deployments,jobs,services,haproxytemplateconfigs,roles,rolebindings,networkpolicies"
    names = kubectl(kubectl_bin, kubeconfig, "get", kinds,
                    "-n", "haptic-system", "-o", "name").split()
    assert sorted(names) == sorted([
        "deployment.apps/haproxy", "deployment.apps/haptic-controller",
        "service/haproxy", "service/haptic-controller-debug", "service/haptic-controller-metrics",
        "service/haptic-controller-webhook",
        "haproxytemplateconfig.haproxy-haptic.org/haptic-config",
        "job.batch/haptic-webhook-certs",
        "networkpolicy.networking.k8s.io/haproxy",
        "role.rbac.authorization.k8s.io/haptic-controller",
        "role.rbac.authorization.k8s.io/haptic-webhook-certs",
        "rolebinding.rbac.authorization.k8s.io/haptic-controller",
        "rolebinding.rbac.authorization.k8s.io/haptic-webhook-certs",
    ])
    cluster = kubectl(kubectl_bin, kubeconfig, "get", "clusterroles,clusterrolebindings,ingressclasses", "-o", "name")
    assert sorted(cluster.split()) == ["clusterrole.rbac.authorization.k8s.io/haptic-controller",
                                       "clusterrolebinding.rbac.authorization.k8s.io/haptic-controller",
                                       "ingressclass.networking.k8s.io/haptic"]
    again = kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-k", str(DEPLOY))
    assert "created" not in again  # idempotent


def test_gateway_overlay_builds_and_applies_after_the_gateway_api_crds(kubectl_bin: str, kubeconfig: Path,
                                                                       tmp_path: Path) -> None:
    overlay = REPO / "examples" / "gateway-cluster"
    built = [d for d in yaml.safe_load_all(kubectl(kubectl_bin, None, "kustomize", str(overlay))) if d]
    config = next(d for d in built if d["kind"] == "HAProxyTemplateConfig")
    expanded = next(d for d in yaml.safe_load_all((overlay / "haproxytemplateconfig.yaml").read_text()) if d)
    assert config["spec"] == expanded["spec"], "the patch replaces the base config by the gateway one"
    service = next(d for d in built if d["kind"] == "Service" and d["metadata"]["name"] == "haproxy")
    assert {"name": "gateway-http", "port": 81, "targetPort": 8081, "nodePort": 30081} in service["spec"]["ports"]
    crds = tmp_path / "gateway-api.yaml"
    crds.write_text(yaml.safe_dump_all(list(gateway_api_crds().values())))
    kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-f", str(DEPLOY / "crds"),
            "-f", str(DEPLOY / "namespace.yaml"), "--server-side", "-f", str(crds))
    out = kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-k", str(overlay))
    assert "gateway.gateway.networking.k8s.io/haptic created" in out, out
    assert "gatewayclass.gateway.networking.k8s.io/haptic created" in out
    names = kubectl(kubectl_bin, kubeconfig, "get", "gateways,clusterroles", "-A", "-o", "name").split()
    assert "gateway.gateway.networking.k8s.io/haptic" in names
    assert "clusterrole.rbac.authorization.k8s.io/haptic-controller-gateway" in names


@pytest.mark.haproxy
def test_bootstrap_haproxy_config_is_valid(haproxy_bin: str) -> None:
    done = subprocess.run([haproxy_bin, "-c", "-f", str(DEPLOY / "haproxy" / "haproxy.cfg")], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.haproxy
def test_haproxy_container_command_runs_with_a_master_socket(haproxy_bin: str, tmp_path: Path) -> None:
    """The haproxy container's arguments, run for real (paths moved into tmp_path, the stats port made
    free and loopback-only): master-worker mode with the master CLI the dataplaneapi sidecar uses."""
    deployment = next(d for d in yaml.safe_load_all((DEPLOY / "haproxy" / "haproxy.yaml").read_text())
                      if d and d["kind"] == "Deployment")
    container = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "haproxy")
    port = free_port()
    config = translate_for_pod((DEPLOY / "haproxy" / "haproxy.cfg").read_text().replace(":8404", f":{port}"),
                               pod_ip="127.0.0.1", storage_root=str(tmp_path))
    (tmp_path / "haproxy.cfg").write_text(config)
    run_dir = tempfile.mkdtemp(prefix="hx-")  # unix socket paths must stay short (about 100 bytes)
    args = [a.replace("/var/run/haproxy", run_dir).replace("/etc/haproxy", str(tmp_path))
            for a in container["args"]]
    process = subprocess.Popen([haproxy_bin, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        master = f"{run_dir}/master.sock"
        answer = ""
        for _ in range(100):
            try:
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.connect(master)
                    sock.sendall(b"show proc\n")
                    answer = sock.recv(65536).decode()
                break
            except OSError:
                time.sleep(0.05)
        assert "master" in answer and "worker" in answer, answer
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
        assert health.status_code == 200 and health.text.strip() == "ok"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.mark.parametrize("password", ["plain", "p@ss'w\"o|r&d\\x/y #z: *q", "- [not, a, list]"])
def test_bootstrap_init_container_writes_the_credentials_verbatim(tmp_path: Path, password: str) -> None:
    """The init container's script, run by /bin/sh with its paths moved into tmp_path: the dataplaneapi
    config it writes holds the Secret's values exactly, whatever characters they contain."""
    deployment = next(d for d in yaml.safe_load_all((DEPLOY / "haproxy" / "haproxy.yaml").read_text())
                      if d and d["kind"] == "Deployment")
    init = deployment["spec"]["template"]["spec"]["initContainers"][0]
    script = init["command"][-1]
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    for name in ("haproxy.cfg", "dataplaneapi.yaml"):
        (config_dir / name).write_text((DEPLOY / "haproxy" / name).read_text())
    for mount in ("/etc/dataplaneapi", "/etc/haproxy", "/var/lib/dataplaneapi"):
        script = script.replace(mount, str(tmp_path / mount.strip("/").replace("/", "-")))
    script = script.replace("/config/", f"{config_dir}/")
    (tmp_path / "etc-dataplaneapi").mkdir()
    done = subprocess.run(["/bin/sh", "-ec", script], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                          "DATAPLANE_USERNAME": "admin", "DATAPLANE_PASSWORD": password},
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((tmp_path / "etc-dataplaneapi" / "dataplaneapi.yaml").read_text())
    assert written["dataplaneapi"]["user"] == [{"name": "admin", "password": password, "insecure": True}]
    assert (tmp_path / "etc-haproxy" / "maps").is_dir() and (tmp_path / "etc-haproxy" / "haproxy.cfg").is_file()
