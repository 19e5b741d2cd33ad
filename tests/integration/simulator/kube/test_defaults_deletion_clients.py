"""Defaults and status on create, generation, garbage-collected deletion and default ServiceAccounts, seen
through ``kubectl`` and the official client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: "1"}
"""


@pytest.fixture
def kubectl(kubectl_bin: str, tmp_path: Path) -> Any:
    with BackgroundServer() as server:
        yield Kubectl(kubectl_bin, server, tmp_path)


def test_kubectl_sees_the_servers_defaults(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=OBJECTS)
    service = json.loads(kubectl("get", "service", "web", "-n", "shop", "-o", "json").stdout)
    assert service["status"] == {"loadBalancer": {}}
    assert (service["spec"]["type"], service["spec"]["sessionAffinity"]) == ("ClusterIP", "None")
    assert service["spec"]["clusterIP"].startswith("10.96.")
    pod = json.loads(kubectl("get", "pod", "web", "-n", "shop", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Pending" and pod["spec"]["serviceAccountName"] == "default"
    assert "generation" not in pod["metadata"]
    assert kubectl("get", "configmap", "settings", "-n", "shop", "-o", "jsonpath={.metadata.generation}").stdout == ""
    assert kubectl("get", "serviceaccount", "default", "-n", "shop", "-o", "name").stdout.strip() == \
        "serviceaccount/default"


def test_foreground_deletion_waits_for_dependents(kubectl: Kubectl) -> None:
    config = client.Configuration()
    config.host = kubectl.server.url
    core = client.CoreV1Api(client.ApiClient(config))
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid,
           "blockOwnerDeletion": True}
    core.create_namespaced_config_map("default", {"metadata": {"name": "held", "ownerReferences": [ref],
                                                               "finalizers": ["example.com/hold"]}})
    answer = core.delete_namespaced_config_map("owner", "default", propagation_policy="Foreground",
                                               _preload_content=False)
    body = json.loads(answer.data)
    assert body["metadata"]["finalizers"] == ["foregroundDeletion"] and body["metadata"]["deletionTimestamp"]
    assert core.read_namespaced_config_map("owner", "default").metadata.finalizers == ["foregroundDeletion"]
    assert core.read_namespaced_config_map("held", "default").metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == []
