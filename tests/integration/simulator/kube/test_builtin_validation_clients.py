"""Built-in kinds validated like the API server validates them, through ``kubectl`` and the official client:
required fields, immutable fields, unknown fields; a refused write changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: default}}
spec:
{selector}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx}}]
"""


@pytest.fixture
def kubectl(kubectl_bin: str, tmp_path: Path) -> Any:
    with BackgroundServer() as server:
        yield Kubectl(kubectl_bin, server, tmp_path)


def test_kubectl_deployment_selector_required_and_immutable(kubectl: Kubectl) -> None:
    refused = kubectl("apply", "-f", "-", stdin=DEPLOYMENT.format(selector=""), check=False)
    assert 'The Deployment "web" is invalid: spec.selector: Required value' in refused.stderr, refused.stderr
    kubectl("apply", "-f", "-", stdin=DEPLOYMENT.format(selector="  selector: {matchLabels: {app: web}}"))
    changed = DEPLOYMENT.format(selector="  selector: {matchLabels: {app: web, tier: front}}").replace(
        "labels: {app: web}", "labels: {app: web, tier: front}")
    refused = kubectl("apply", "-f", "-", stdin=changed, check=False)
    assert "spec.selector: Invalid value: " in refused.stderr and "field is immutable" in refused.stderr
    stored = kubectl.stored("apps/v1", "deployments", "default", "web")
    assert stored["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    refused = kubectl("apply", "-f", "-", stdin=DEPLOYMENT.format(selector="  selector: {matchLabels: {app: web}}")
                      .replace("image: nginx", "image: nginx, imagePullPolcy: Always"), check=False)
    assert ('strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolcy"'
            in refused.stderr), refused.stderr


def test_kubectl_immutable_config_map(kubectl: Kubectl) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {a: '1'}\n"
    kubectl("apply", "-f", "-", stdin=manifest)
    refused = kubectl("apply", "-f", "-", stdin=manifest.replace("'1'", "'2'"), check=False)
    assert "data: Forbidden: field is immutable when `immutable` is set" in refused.stderr, refused.stderr
    assert kubectl.stored("v1", "configmaps", "default", "frozen")["data"] == {"a": "1"}


def test_official_client_ingress_causes_name_each_field(kubectl: Kubectl) -> None:
    config = client.Configuration()
    config.host = kubectl.server.url
    networking = client.NetworkingV1Api(client.ApiClient(config))
    body = {"metadata": {"name": "shop"}, "spec": {"rules": [{"host": "shop.example", "http": {"paths": [
        {"path": "shop", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}
    with pytest.raises(ApiException) as info:
        networking.create_namespaced_ingress("default", body)
    status = json.loads(info.value.body)
    assert (info.value.status, status["reason"]) == (422, "Invalid")
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "shop": must be an absolute path',
         "field": "spec.rules[0].http.paths[0].path"}]
    assert networking.list_namespaced_ingress("default").items == []
