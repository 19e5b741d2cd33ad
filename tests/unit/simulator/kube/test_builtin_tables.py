"""Server-side table columns of built-in kinds, cell by cell as the API server's printers compute them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from simulator.kube import FakeKubeAPI
from simulator.kube.builtin_tables import human_duration
from simulator.kube.tables import to_table

NOW = datetime(2026, 1, 1, 1, 0, 0, tzinfo=UTC)
META = {"name": "x", "namespace": "default", "creationTimestamp": "2026-01-01T00:55:30Z"}


def table(api_version: str, plural: str, obj: dict[str, Any]) -> tuple[list[str], list[str], list[Any]]:
    rt = FakeKubeAPI().resolve(api_version, plural)
    answer = to_table(rt, [{"metadata": META, **obj}], "1", None, NOW)
    columns = answer["columnDefinitions"]
    default = [c["name"] for c in columns if c["priority"] == 0]
    wide = [c["name"] for c in columns if c["priority"] == 1]
    return default, wide, answer["rows"][0]["cells"]


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "0s"), (119, "119s"), (120, "2m"), (150, "2m30s"), (600, "10m"), (3 * 3600 - 1, "179m"),
    (3 * 3600, "3h"), (5 * 3600 + 60, "5h1m"), (47 * 3600, "47h"), (2 * 86400 + 3600, "2d1h"), (9 * 86400, "9d"),
    (800 * 86400, "2y70d"), (-5, "<invalid>"),
])
def test_ages_are_human_durations(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_pod_columns() -> None:
    pod = {"spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
           "status": {"phase": "Running", "podIP": "10.0.0.5",
                      "containerStatuses": [
                          {"name": "a", "ready": True, "restartCount": 2, "state": {"running": {}},
                           "lastState": {"terminated": {"finishedAt": "2026-01-01T00:58:00Z"}}},
                          {"name": "b", "ready": False, "restartCount": 1,
                           "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}
    default, wide, cells = table("v1", "pods", pod)
    assert default == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert wide == ["IP", "Node", "Nominated Node", "Readiness Gates"]
    assert cells == ["x", "1/2", "CrashLoopBackOff", "3 (2m ago)", "4m30s", "10.0.0.5", "n1", "<none>", "<none>"]
    pending = table("v1", "pods", {"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}})[2]
    assert pending[1:4] == ["0/1", "Pending", "0"]
    leaving = table("v1", "pods", {"metadata": {**META, "deletionTimestamp": "2026-01-01T00:59:00Z"},
                                   "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Running"}})[2]
    assert leaving[2] == "Terminating"
    init = table("v1", "pods", {"spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]},
                                "status": {"phase": "Pending", "initContainerStatuses": [
                                    {"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}}]}})[2]
    assert init[2] == "Init:0/1"


def test_service_columns() -> None:
    default, _wide, cells = table("v1", "services", {"spec": {
        "type": "NodePort", "clusterIP": "10.96.0.9", "selector": {"app": "web", "tier": "a"},
        "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}})
    assert default == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"]
    assert cells == ["x", "NodePort", "10.96.0.9", "<none>", "80:30080/TCP,53/UDP", "4m30s", "app=web,tier=a"]
    pending = table("v1", "services", {"spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.2", "ports": []}})[2]
    assert pending[3:5] == ["<pending>", "<none>"]
    served = table("v1", "services", {"spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.2"},
                                      "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}})[2]
    assert served[3] == "1.2.3.4"
    assert table("v1", "services", {"spec": {"type": "ExternalName", "externalName": "db.example.com"}})[2][3] == \
        "db.example.com"


def test_config_and_secret_columns() -> None:
    config = {"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    assert table("v1", "configmaps", config)[2] == ["x", 3, "4m30s"]
    tls = {"type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}
    default, _wide, cells = table("v1", "secrets", tls)
    assert default == ["Name", "Type", "Data", "Age"]
    assert cells == ["x", "kubernetes.io/tls", 2, "4m30s"]


def test_workload_columns() -> None:
    template = {"spec": {"containers": [{"name": "web", "image": "nginx:1"}, {"name": "log", "image": "fluentd"}]}}
    default, wide, cells = table("apps/v1", "deployments", {
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}})
    assert default == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    assert wide == ["Containers", "Images", "Selector"]
    assert cells == ["x", "2/3", 3, 2, "4m30s", "web,log", "nginx:1,fluentd", "app=web"]
    job = table("batch/v1", "jobs", {"spec": {"completions": 3, "template": template},
                                     "status": {"succeeded": 3, "startTime": "2026-01-01T00:56:00Z",
                                                "completionTime": "2026-01-01T00:57:30Z",
                                                "conditions": [{"type": "Complete", "status": "True"}]}})
    assert job[0] == ["Name", "Status", "Completions", "Duration", "Age"]
    assert job[2][1:5] == ["Complete", "3/3", "90s", "4m30s"]
    cron = table("batch/v1", "cronjobs", {"spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {
        "template": template}}}})
    assert cron[0] == ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"]
    assert cron[2][1:7] == ["0 3 * * *", "<none>", False, 0, "<none>", "4m30s"]
    hpa = table("autoscaling/v2", "horizontalpodautoscalers", {"spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                       "averageUtilization": 70}}}]}})
    assert hpa[2][1:6] == ["Deployment/web", "cpu: <unknown>/70%", "<unset>", 5, 0]


def test_ingress_and_rbac_columns() -> None:
    default, _wide, cells = table("networking.k8s.io/v1", "ingresses", {
        "spec": {"ingressClassName": "haptic", "rules": [{"host": "a.example"}, {"host": "b.example"}],
                 "tls": [{"hosts": ["a.example"]}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}})
    assert default == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    assert cells == ["x", "haptic", "a.example,b.example", "192.0.2.1", "80, 443", "4m30s"]
    binding = table("rbac.authorization.k8s.io/v1", "rolebindings", {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot"}, {"kind": "Group", "name": "dev"}]})
    assert binding[2] == ["x", "ClusterRole/view", "4m30s", "", "dev", "default/bot"]
    assert table("rbac.authorization.k8s.io/v1", "roles", {})[0] == ["Name", "Created At"]
