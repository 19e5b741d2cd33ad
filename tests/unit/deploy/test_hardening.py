"""Every workload in deploy/ runs non-root with a read-only root filesystem, no capabilities, the
RuntimeDefault seccomp profile and bounded memory; only the controller reaches the Dataplane API."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.deploy.test_manifests import all_objects, config, find

WORKLOADS = [o for o in all_objects() if o["kind"] in ("Deployment", "Job")]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def every_container(workload: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


@pytest.mark.parametrize("workload", WORKLOADS, ids=[f"{w['kind']}/{w['metadata']['name']}" for w in WORKLOADS])
def test_pods_run_unprivileged(workload: dict[str, Any]) -> None:
    pod = pod_spec(workload).get("securityContext") or {}
    assert pod.get("runAsNonRoot") is True and pod.get("runAsUser", 0) != 0
    assert pod.get("seccompProfile") == {"type": "RuntimeDefault"}
    for container in every_container(workload):
        context = container.get("securityContext") or {}
        name = container["name"]
        assert context.get("allowPrivilegeEscalation") is False, name
        assert context.get("readOnlyRootFilesystem") is True, name
        assert context.get("capabilities") == {"drop": ["ALL"]}, name
        resources = container.get("resources") or {}
        assert {"cpu", "memory"} <= set(resources.get("requests") or {}), name
        assert "memory" in (resources.get("limits") or {}), name


def test_writable_paths_are_volumes() -> None:
    """With a read-only root filesystem, what haproxy and dataplaneapi write must be mounted."""
    haproxy = find("Deployment", "haproxy")
    volumes = {v["name"]: v for v in pod_spec(haproxy)["volumes"]}
    spec = config().spec.dataplane
    for container in every_container(haproxy):
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        if container["name"] in ("haproxy", "dataplane"):
            for path in ("/etc/haproxy", "/var/run/haproxy", "/tmp"):
                assert path in mounts and "emptyDir" in volumes[mounts[path]], (container["name"], path)
    assert spec.maps_dir.startswith("/etc/haproxy/") and spec.config_file.startswith("/etc/haproxy/")


def test_only_the_controller_reaches_the_dataplane_api() -> None:
    policy = find("NetworkPolicy", "haproxy")["spec"]
    haproxy = find("Deployment", "haproxy")
    assert policy["podSelector"]["matchLabels"].items() <= haproxy["spec"]["template"]["metadata"]["labels"].items()
    assert policy["policyTypes"] == ["Ingress"]
    dataplane_port = config().spec.dataplane.port
    controller_labels = find("Deployment", "haptic-controller")["spec"]["template"]["metadata"]["labels"]
    open_ports: set[int] = set()
    for rule in policy["ingress"]:
        ports = {p["port"] for p in rule["ports"]}
        if "from" not in rule:
            open_ports |= ports
            continue
        if dataplane_port in ports:
            assert rule["from"] == [{"podSelector": {"matchLabels": controller_labels}}]
    assert dataplane_port not in open_ports
    served = {p["containerPort"] for c in pod_spec(haproxy)["containers"] if c["name"] == "haproxy"
              for p in c["ports"]}
    assert open_ports == served  # traffic and health ports stay reachable
