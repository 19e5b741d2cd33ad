"""deploy/ with the real tools this machine has: kustomize (kubectl's) builds it, kubectl applies it to
the fake Kubernetes API (server-side dry run, then for real), haproxy accepts the bootstrap config."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from simulator.kube import BackgroundServer, FakeKubeAPI, write_kubeconfig
from simulator.local.cluster_types import LOCAL_TYPES

pytestmark = pytest.mark.kubectl
DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[Path]:
    with BackgroundServer(lambda: FakeKubeAPI(types=LOCAL_TYPES)) as server:
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
    assert len([k for k in kinds if k.startswith("CustomResourceDefinition/")]) == 2
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
    names = kubectl(kubectl_bin, kubeconfig, "get", "deployments,services,haproxytemplateconfigs,roles,rolebindings",
                    "-n", "haptic-system", "-o", "name").split()
    assert sorted(names) == sorted([
        "deployment.apps/haproxy", "deployment.apps/haptic-controller",
        "service/haproxy", "service/haptic-controller-debug", "service/haptic-controller-metrics",
        "service/haptic-controller-webhook",
        "haproxytemplateconfig.haproxy-haptic.org/haptic-config",
        "role.rbac.authorization.k8s.io/haptic-leader-election",
        "rolebinding.rbac.authorization.k8s.io/haptic-leader-election",
    ])
    cluster = kubectl(kubectl_bin, kubeconfig, "get", "clusterroles,clusterrolebindings,ingressclasses", "-o", "name")
    assert sorted(cluster.split()) == ["clusterrole.rbac.authorization.k8s.io/haptic-controller",
                                       "clusterrolebinding.rbac.authorization.k8s.io/haptic-controller",
                                       "ingressclass.networking.k8s.io/haptic"]
    again = kubectl(kubectl_bin, kubeconfig, "apply", "--validate=false", "-k", str(DEPLOY))
    assert "created" not in again  # idempotent


@pytest.mark.haproxy
def test_bootstrap_haproxy_config_is_valid(haproxy_bin: str) -> None:
    done = subprocess.run([haproxy_bin, "-c", "-f", str(DEPLOY / "haproxy" / "haproxy.cfg")], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
