"""HorizontalPodAutoscalers served as autoscaling/v2 (stored) and autoscaling/v1 (converted), through the
official client and kubectl: what one version writes the other reads, and nothing is lost through v1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client, watch

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl


@pytest.fixture
def server() -> Iterator[BackgroundServer]:
    with BackgroundServer() as srv:
        yield srv


def apis(server: BackgroundServer) -> tuple[client.AutoscalingV1Api, client.AutoscalingV2Api]:
    config = client.Configuration()
    config.host = server.url
    api = client.ApiClient(config)
    return client.AutoscalingV1Api(api), client.AutoscalingV2Api(api)


TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def test_v1_writes_read_back_as_v2_and_the_other_way(server: BackgroundServer) -> None:
    v1, v2 = apis(server)
    v1.create_namespaced_horizontal_pod_autoscaler("default", {
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": TARGET, "minReplicas": 2, "maxReplicas": 6, "targetCPUUtilizationPercentage": 60}})
    as_v2 = v2.read_namespaced_horizontal_pod_autoscaler("web", "default")
    assert as_v2.api_version == "autoscaling/v2"
    assert [(m.type, m.resource.name, m.resource.target.average_utilization) for m in as_v2.spec.metrics] == [
        ("Resource", "cpu", 60)]

    v2.create_namespaced_horizontal_pod_autoscaler("default", {
        "metadata": {"name": "api"},
        "spec": {"scaleTargetRef": TARGET, "maxReplicas": 4, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": 50}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                          "averageValue": "500Mi"}}}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}})
    as_v1 = v1.read_namespaced_horizontal_pod_autoscaler("api", "default")
    assert as_v1.spec.target_cpu_utilization_percentage == 50
    assert "memory" in as_v1.metadata.annotations["autoscaling.alpha.kubernetes.io/metrics"]
    # A v1 write keeps what only v2 can say (the memory metric and behavior travel in annotations).
    v1.patch_namespaced_horizontal_pod_autoscaler("api", "default", {"spec": {"targetCPUUtilizationPercentage": 75}})
    back = v2.read_namespaced_horizontal_pod_autoscaler("api", "default")
    assert [(m.resource.name, m.resource.target.average_utilization, m.resource.target.average_value)
            for m in back.spec.metrics] == [("cpu", 75, None), ("memory", None, "500Mi")]
    assert back.spec.behavior.scale_down.stabilization_window_seconds == 60
    assert not (back.metadata.annotations or {})
    listed = v1.list_namespaced_horizontal_pod_autoscaler("default")
    assert [(i.metadata.name, i.spec.target_cpu_utilization_percentage) for i in listed.items] == [
        ("api", 75), ("web", 60)]
    seen = [(e["object"].api_version, e["object"].spec.target_cpu_utilization_percentage) for e in watch.Watch().stream(
        v1.list_namespaced_horizontal_pod_autoscaler, "default", timeout_seconds=1)]
    assert seen == [("autoscaling/v1", 75), ("autoscaling/v1", 60)]


def test_status_in_v1_and_kubectl_reads_both_versions(server: BackgroundServer, kubectl_bin: str,
                                                      tmp_path: Path) -> None:
    v1, v2 = apis(server)
    v2.create_namespaced_horizontal_pod_autoscaler("default", {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 3, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": 80}}}]}})
    v2.patch_namespaced_horizontal_pod_autoscaler_status("web", "default", {"status": {
        "currentReplicas": 2, "desiredReplicas": 3,
        "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 91}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}})
    status = v1.read_namespaced_horizontal_pod_autoscaler_status("web", "default").status
    assert (status.current_replicas, status.desired_replicas, status.current_cpu_utilization_percentage) == (2, 3, 91)
    kubectl = Kubectl(kubectl_bin, server, tmp_path)
    doc = yaml.safe_load(kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o", "yaml").stdout)
    assert doc["apiVersion"] == "autoscaling/v1" and doc["spec"]["targetCPUUtilizationPercentage"] == 80
    assert "AbleToScale" in doc["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"]
    table = kubectl("get", "hpa", "web").stdout.split("\n")
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert "cpu: 91%/80%" in table[1]
