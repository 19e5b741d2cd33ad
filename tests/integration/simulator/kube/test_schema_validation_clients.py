"""Custom resources checked against their CRD's schema, seen through ``kubectl`` and the official client:
422 naming the field, ``fieldValidation`` (kubectl's default Strict, the client's default Warn), pruning,
defaults and CEL rules; a refused write changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.rest import ApiException

from simulator.kube import BackgroundServer
from tests.support.kubectl import Kubectl

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "self.size <= self.maxSize"
              message: size must not exceed maxSize
            properties:
              size: {type: integer, minimum: 1}
              maxSize: {type: integer, default: 10}
              color: {type: string, enum: [red, blue]}
"""


def gadget(spec: str) -> str:
    return f"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {{name: g, namespace: default}}\nspec: {spec}\n"


@pytest.fixture
def kubectl(kubectl_bin: str, tmp_path: Path) -> Any:
    with BackgroundServer() as server:
        tool = Kubectl(kubectl_bin, server, tmp_path)
        tool("apply", "-f", "-", stdin=CRD)
        yield tool


def stored_gadget(kubectl: Kubectl) -> Any:
    def read(api: Any) -> Any:
        items = api.list(api.resolve("example.com/v1", "gadgets"), "default").items
        return items[0] if items else None

    return kubectl.server.call(read)


pytestmark = pytest.mark.kubectl


def test_kubectl_sees_the_422_naming_the_field(kubectl: Kubectl) -> None:
    refused = kubectl("apply", "-f", "-", stdin=gadget("{size: big}"), check=False)
    assert refused.returncode != 0
    assert ('spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'
            in refused.stderr), refused.stderr
    refused = kubectl("apply", "-f", "-", stdin=gadget("{size: 0, color: pink}"), check=False)
    assert "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1" in refused.stderr
    assert 'spec.color: Unsupported value: "pink": supported values: "red", "blue"' in refused.stderr
    refused = kubectl("apply", "-f", "-", stdin=gadget("{size: 20}"), check=False)
    assert "spec: Invalid value: size must not exceed maxSize" in refused.stderr, refused.stderr
    assert stored_gadget(kubectl) is None


def test_kubectl_strict_field_validation_refuses_unknown_fields(kubectl: Kubectl) -> None:
    refused = kubectl("apply", "-f", "-", stdin=gadget("{size: 1, colour: red}"), check=False)
    assert ('Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field '
            '"spec.colour"') in refused.stderr, refused.stderr
    assert stored_gadget(kubectl) is None
    warned = kubectl("apply", "--validate=warn", "-f", "-", stdin=gadget("{size: 1, colour: red}"))
    assert 'unknown field "spec.colour"' in warned.stderr
    assert stored_gadget(kubectl)["spec"] == {"size": 1, "maxSize": 10}
    refused = kubectl("apply", "--server-side", "-f", "-", stdin=gadget("{size: 2, colour: red}"), check=False)
    assert ".spec.colour: field not declared in schema" in refused.stderr, refused.stderr
    assert stored_gadget(kubectl)["spec"]["size"] == 1


def test_official_client_gets_warnings_pruning_and_defaults(kubectl: Kubectl) -> None:
    config = client.Configuration()
    config.host = kubectl.server.url
    custom = client.CustomObjectsApi(client.ApiClient(config))
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
            "spec": {"size": 3, "shape": "round"}}
    created = custom.create_namespaced_custom_object("example.com", "v1", "default", "gadgets", body)
    assert created["spec"] == {"size": 3, "maxSize": 10}
    with pytest.raises(ApiException) as info:
        custom.patch_namespaced_custom_object("example.com", "v1", "default", "gadgets", "g",
                                              {"spec": {"size": "three"}})
    assert info.value.status == 422
    status = json.loads(info.value.body)
    assert status["details"] == {
        "name": "g", "group": "example.com", "kind": "Gadget",
        "causes": [{"reason": "FieldValueTypeInvalid", "field": "spec.size",
                    "message": 'Invalid value: "string": spec.size in body must be of type integer: "string"'},
                   {"reason": "FieldValueInvalid", "field": "<nil>",
                    "message": 'Invalid value: "null": some validation rules were not checked because the object '
                               "was invalid; correct the existing errors to complete validation"}]}
    assert stored_gadget(kubectl)["spec"]["size"] == 3
    http = urllib3.PoolManager()
    answer = http.request("POST", kubectl.server.url + "/apis/example.com/v1/namespaces/default/gadgets",
                          body=json.dumps({**body, "metadata": {"name": "h"}}).encode(),
                          headers={"Content-Type": "application/json"})
    assert answer.status == 201
    assert answer.headers.getlist("Warning") == ['299 - "unknown field \\"spec.shape\\""']
