"""The fake's /openapi/v3 documents: built-in kinds from the client's models, named as the API server names
them, and custom resources from their CRD's schema."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from haptic.k8s.api import NotFound
from simulator.kube import FakeKubeAPI
from simulator.kube.openapi import OpenAPI

_DOCS = Path(__file__).resolve().parents[4] / "simulator" / "kube" / "data" / "kube_docs.json"
_GENERATOR = Path(__file__).resolve().parents[4] / "scripts" / "gen_kube_docs.py"
REF = "#/components/schemas/"


def test_docs_file_matches_the_installed_client() -> None:
    spec = importlib.util.spec_from_file_location("gen_kube_docs", _GENERATOR)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    # what the client's models say, not its release: a patch release describing the kinds alike changes nothing
    recorded, installed = json.loads(_DOCS.read_text()), json.loads(generator.render())
    assert recorded.pop("client") and installed.pop("client")
    assert recorded == installed, "the client's models changed: run python scripts/gen_kube_docs.py"


def schemas(api: FakeKubeAPI, path: str) -> dict[str, Any]:
    crd_rt = api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    document: dict[str, Any] = OpenAPI(api.types).serve(path, api.objects(crd_rt))
    return dict(document["components"]["schemas"])


def resolve(found: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return dict(found[ref[len(REF):]]) if ref else schema


def test_built_in_kinds_carry_their_gvk_fields_and_descriptions() -> None:
    found = schemas(FakeKubeAPI(), "apis/apps/v1")
    deployment = found["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deployment["description"].startswith("Deployment enables declarative updates")
    assert deployment["properties"]["metadata"] == {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    spec = resolve(found, deployment["properties"]["spec"])
    strategy = resolve(found, spec["properties"]["strategy"])
    rolling = resolve(found, strategy["properties"]["rollingUpdate"])
    assert resolve(found, rolling["properties"]["maxSurge"])["format"] == "int-or-string"
    template = resolve(found, spec["properties"]["template"])
    pod_spec = resolve(found, template["properties"]["spec"])
    containers = pod_spec["properties"]["containers"]
    assert containers["type"] == "array"
    container = resolve(found, containers["items"])
    assert "name" in container["required"]
    resources = resolve(found, container["properties"]["resources"])
    limits = resources["properties"]["limits"]
    assert limits["additionalProperties"] == {"$ref": REF + "io.k8s.apimachinery.pkg.api.resource.Quantity"}
    assert found["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"][0]["kind"] == \
        "DeploymentList"


def test_each_group_version_has_its_own_document_with_write_parameters() -> None:
    api = FakeKubeAPI()
    openapi = OpenAPI(api.types)
    root = openapi.serve("", [])
    assert root["paths"]["apis/rbac.authorization.k8s.io/v1"]["serverRelativeURL"].startswith(
        "/openapi/v3/apis/rbac.authorization.k8s.io/v1?hash=")
    rbac = openapi.serve("apis/rbac.authorization.k8s.io/v1", [])
    patch = rbac["paths"]["/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}"]["patch"]
    assert {p["name"] for p in patch["parameters"]} >= {"fieldValidation", "fieldManager", "dryRun"}
    reviews = openapi.serve("apis/authorization.k8s.io/v1", [])
    assert list(reviews["paths"]["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]) == ["post"]
    with pytest.raises(NotFound):
        openapi.serve("apis/nothing.example.com/v1", [])
    assert patch["requestBody"]["content"]["application/json"]["schema"] == {"$ref": REF + "io.k8s.api.rbac.v1.Role"}
    assert "io.k8s.api.core.v1.Event" in openapi.serve("api/v1", [])["components"]["schemas"]


def test_custom_resources_get_their_crd_schema() -> None:
    api = FakeKubeAPI()
    crd_rt = api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    api.create(crd_rt, None, {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "description": "A widget.",
            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}})
    found = schemas(api, "apis/example.com/v1")
    widget = found["com.example.v1.Widget"]
    assert widget["description"] == "A widget."
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert widget["properties"]["spec"]["properties"]["size"] == {"type": "integer"}
    assert set(widget["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in found
    assert found["com.example.v1.WidgetList"]["properties"]["items"]["items"] == {"$ref": REF + "com.example.v1.Widget"}
