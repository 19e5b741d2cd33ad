"""``kubectl explain`` against the fake API's /openapi/v3: built-in kinds (described by the official
client's models) and custom resources (by their CRD's openAPIV3Schema). Both failed before ("GVK ... not
found in OpenAPI schema")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A widget makes things.
        properties:
          spec:
            type: object
            description: What the widget should be.
            required: [size]
            properties:
              size: {type: integer, description: How big it is.}
              color: {type: string, enum: [red, blue]}
"""


@pytest.fixture
def kubectl(kubectl_bin: str, tmp_path: Path) -> Iterator[Kubectl]:
    with BackgroundServer() as server:
        yield Kubectl(kubectl_bin, server, tmp_path)


def test_explain_built_in_fields(kubectl: Kubectl) -> None:
    out = kubectl("explain", "deployment.spec.strategy.rollingUpdate.maxSurge").stdout
    assert "GROUP:      apps" in out and "KIND:       Deployment" in out
    assert "FIELD: maxSurge <IntOrString>" in out
    assert "The maximum number of pods that can be scheduled above the desired number" in out
    ports = kubectl("explain", "pods.spec.containers.ports").stdout
    assert "containerPort\t<integer> -required-" in ports
    assert "FIELD: ports <[]ContainerPort>" in ports
    ingress = kubectl("explain", "ingress.spec.rules.http.paths.backend.service.port", "--recursive").stdout
    assert "name\t<string>" in ingress and "number\t<integer>" in ingress
    role = kubectl("explain", "roles.rules").stdout
    assert "apiGroups\t<[]string>" in role and "GROUP:      rbac.authorization.k8s.io" in role
    hpa = kubectl("explain", "hpa.spec", "--api-version=autoscaling/v1").stdout
    assert "targetCPUUtilizationPercentage\t<integer>" in hpa


def test_explain_custom_resources(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=CRD)
    out = kubectl("explain", "widgets.spec").stdout
    assert "KIND:       Widget" in out and "What the widget should be." in out
    assert "size\t<integer> -required-" in out
    assert "enum: red, blue" in out
    top = kubectl("explain", "widget").stdout
    assert "A widget makes things." in top and "metadata\t<ObjectMeta>" in top
