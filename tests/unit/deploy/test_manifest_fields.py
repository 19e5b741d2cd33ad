"""Every field of the built-in objects under deploy/ is one Kubernetes knows, with the right shape:
checked against the official client's models (the OpenAPI types it was generated from), since this
machine has no API server with an OpenAPI document to validate against."""

from __future__ import annotations

from typing import Any

import kubernetes.client.models as k8s_models
import pytest

from tests.unit.deploy.test_manifests import all_objects

_PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object, "datetime": str}


def problems(value: Any, type_name: str, path: str) -> list[str]:
    if type_name.startswith(("List[", "list[")):
        if not isinstance(value, list):
            return [f"{path}: expected a list ({type_name})"]
        return [p for i, item in enumerate(value) for p in problems(item, type_name[5:-1], f"{path}[{i}]")]
    if type_name.startswith(("Dict[", "dict(")):
        if not isinstance(value, dict):
            return [f"{path}: expected a mapping ({type_name})"]
        inner = type_name[5:-1].split(",", 1)[1].strip()
        return [p for key, item in value.items() for p in problems(item, inner, f"{path}.{key}")]
    if type_name in _PRIMITIVES:
        ok = isinstance(value, _PRIMITIVES[type_name]) and not (type_name == "int" and isinstance(value, bool))
        return [] if ok else [f"{path}: expected {type_name}, got {value!r}"]
    model = getattr(k8s_models, type_name, None)
    if model is None:
        return [f"{path}: unknown model {type_name}"]
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({type_name})"]
    by_json = {json_name: py_name for py_name, json_name in model.attribute_map.items()}
    found = []
    for key, item in value.items():
        if key not in by_json:
            found.append(f"{path}.{key}: not a field of {type_name}")
        else:
            found += problems(item, model.openapi_types[by_json[key]], f"{path}.{key}")
    return found


MODELS = {
    "Namespace": "V1Namespace", "ServiceAccount": "V1ServiceAccount", "ClusterRole": "V1ClusterRole",
    "ClusterRoleBinding": "V1ClusterRoleBinding", "Role": "V1Role", "RoleBinding": "V1RoleBinding",
    "Secret": "V1Secret", "Service": "V1Service", "Deployment": "V1Deployment", "ConfigMap": "V1ConfigMap",
    "IngressClass": "V1IngressClass", "CustomResourceDefinition": "V1CustomResourceDefinition",
}
BUILT_IN = [o for o in all_objects() if o["kind"] in MODELS]


def test_every_built_in_kind_is_covered() -> None:
    assert {o["kind"] for o in all_objects()} - set(MODELS) == {"HAProxyTemplateConfig"}


@pytest.mark.parametrize("obj", BUILT_IN, ids=[f"{o['kind']}/{o['metadata']['name']}" for o in BUILT_IN])
def test_fields_are_known_to_kubernetes(obj: dict[str, Any]) -> None:
    assert problems(obj, MODELS[obj["kind"]], f"{obj['kind']}/{obj['metadata']['name']}") == []


def test_the_checker_catches_misspelt_and_misshapen_fields() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
                  "spec": {"replicas": "2", "template": {"spec": {"containers": [{"name": "c", "readinesProbe": {}}]}}}}
    assert problems(deployment, "V1Deployment", "d") == [
        "d.spec.replicas: expected int, got '2'",
        "d.spec.template.spec.containers[0].readinesProbe: not a field of V1Container",
    ]
