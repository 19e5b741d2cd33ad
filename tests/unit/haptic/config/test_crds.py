from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from haptic.config.crds import all_crds, render_crd_yaml
from haptic.config.haproxycfg import HAProxyCfg, HAProxyCfgSpec, HAProxyCfgStatus, PodDeploymentStatus
from haptic.config.models import load_config
from tests.support.paths import REPO

REPO = REPO
CRD_DIR = REPO / "deploy" / "crds"


def _nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from _nodes(sub, f"{path}.{name}")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}.*")
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"], f"{path}[]")


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def test_committed_crds_match_the_models() -> None:
    generated = all_crds()
    committed = sorted(p.name for p in CRD_DIR.glob("*.yaml"))
    assert committed == sorted(generated), "deploy/crds has extra or missing files; run `make crds`"
    for name, crd in generated.items():
        assert (CRD_DIR / name).read_text() == render_crd_yaml(crd), f"{name} is stale; run `make crds`"


def test_crds_command_writes_and_checks(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "haptic.cli", "crds", "-o", str(tmp_path)]
    subprocess.run(cmd, check=True, capture_output=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(all_crds())
    assert subprocess.run([*cmd, "--check"], capture_output=True).returncode == 0
    victim = next(tmp_path.iterdir())
    victim.write_text(victim.read_text() + "# edited\n")
    result = subprocess.run([*cmd, "--check"], capture_output=True, text=True)
    assert result.returncode == 1 and victim.name in result.stderr


@pytest.mark.parametrize("name", sorted(all_crds()))
def test_crd_schema_is_structural(name: str) -> None:
    crd = yaml.safe_load((CRD_DIR / name).read_text())
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1" and crd["kind"] == "CustomResourceDefinition"
    for path, node in _nodes(_schema(crd)):
        forbidden = {"$ref", "$defs", "anyOf", "oneOf", "allOf", "not", "title", "const", "nullable"} & set(node)
        assert not forbidden, f"{name}{path}: {forbidden}"
        if node.get("x-kubernetes-preserve-unknown-fields"):
            continue
        if node.get("x-kubernetes-int-or-string"):
            assert "type" not in node, f"{name}{path}: int-or-string fields have no type"
            continue
        assert node.get("type") in {"object", "array", "string", "integer", "number", "boolean"}, f"{name}{path}"
        if node["type"] == "object" and path != ".metadata":
            assert ("properties" in node) != ("additionalProperties" in node), f"{name}{path}"
            assert node.get("additionalProperties") is not False
        if node["type"] == "array":
            assert isinstance(node.get("items"), dict), f"{name}{path}"


def test_template_config_crd_names_columns_and_status() -> None:
    crd = all_crds()["haproxy-haptic.org_haproxytemplateconfigs.yaml"]
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "haproxytemplateconfigs.haproxy-haptic.org"
    assert spec["names"]["kind"] == "HAProxyTemplateConfig"
    assert spec["names"]["shortNames"] == ["htplcfg", "haptpl"]
    assert spec["scope"] == "Namespaced"
    version = spec["versions"][0]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    assert {c["jsonPath"] for c in version["additionalPrinterColumns"]} >= {".status.validationStatus"}
    props = _schema(crd)["properties"]["spec"]["properties"]
    assert props["templatingSettings"]["properties"]["extraContext"]["x-kubernetes-preserve-unknown-fields"]
    fixtures = props["validationTests"]["additionalProperties"]["properties"]["fixtures"]
    assert fixtures["additionalProperties"]["items"]["x-kubernetes-preserve-unknown-fields"]
    # watchedResources and haproxyConfig may come from template libraries (the models require them after merging)
    assert set(_schema(crd)["properties"]["spec"]["required"]) == {"credentialsSecretRef", "podSelector"}


def test_haproxycfg_crd_names_and_columns() -> None:
    crd = all_crds()["haproxy-haptic.org_haproxycfgs.yaml"]
    assert crd["spec"]["names"]["shortNames"] == ["hpcfg"]
    columns = {c["name"]: c["jsonPath"] for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]}
    assert columns["Checksum"] == ".spec.checksum"
    assert columns["Size"] == ".status.metadata.totalSize"
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}
    pods = _schema(crd)["properties"]["status"]["properties"]["deployedToPods"]["items"]["properties"]
    assert "lastReloadID" in pods and "lastOperationSummary" in pods


def test_crd_defaults_equal_model_defaults(spec: dict[str, Any]) -> None:
    """Every scalar default the API server would apply is the one the models apply."""
    crd = all_crds()["haproxy-haptic.org_haproxytemplateconfigs.yaml"]
    wire = load_config(spec).to_json()["spec"]
    spec_schema = _schema(crd)["properties"]["spec"]
    checked = 0
    for path, node in _nodes(spec_schema):
        if "default" not in node or "*" in path or "[]" in path:
            continue
        value: Any = wire
        for part in path.strip(".").split("."):
            value = value[part]
        assert value == node["default"], path
        checked += 1
    assert checked >= 15


def _validator(name: str) -> Any:
    return jsonschema.Draft7Validator(_schema(all_crds()[name]))


def test_model_output_validates_against_the_crd_schema(cr: dict[str, Any]) -> None:
    """What the models accept and emit, the API server accepts too."""
    cr["spec"]["dataplane"] = {"minDeploymentInterval": "1m30s", "port": 8443}
    cr["spec"]["templatingSettings"] = {"extraContext": {"anything": [1, {"nested": True}]}}
    cr["spec"]["maps"] = {
        "h.map": {
            "template": "x",
            "postProcessing": [{"type": "regex_replace", "params": {"pattern": "a", "replace": ""}}],
        }
    }
    cr["spec"]["validationTests"] = {
        "t": {"fixtures": {"ingresses": [{"metadata": {"name": "a"}}]}, "assertions": [{"type": "haproxy_valid"}]}
    }
    cr["status"] = {"validationStatus": "Valid", "lastValidated": "2026-01-01T00:00:00Z"}
    validator = _validator("haproxy-haptic.org_haproxytemplateconfigs.yaml")
    errors = [e.message for e in validator.iter_errors(load_config(cr).to_json())]
    assert errors == []


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda s: s["dataplane"].update(port=70000), "port"),
        (lambda s: s["dataplane"].update(driftPreventionInterval="2x"), "driftPreventionInterval"),
        (lambda s: s["podSelector"].update(matchLabels={}), "matchLabels"),
        (lambda s: s["watchedResources"]["ingresses"].update(indexBy=[]), "indexBy"),
        (lambda s: s["watchedResources"]["ingresses"].update(store="memory"), "store"),
        (
            lambda s: s["haproxyConfig"].update(
                postProcessing=[{"type": "sed", "params": {"pattern": "a", "replace": "b"}}]
            ),
            "type",
        ),
        (lambda s: s.pop("podSelector"), "podSelector"),
    ],
)
def test_crd_schema_rejects_what_the_models_reject(cr: dict[str, Any], mutate: Any, where: str) -> None:
    cr["spec"]["dataplane"] = {}
    mutate(cr["spec"])
    with pytest.raises(ValueError):
        load_config(cr)
    errors = list(_validator("haproxy-haptic.org_haproxytemplateconfigs.yaml").iter_errors(cr))
    assert errors, f"the CRD schema accepted a bad {where}"
    assert any(where in ".".join(str(p) for p in e.absolute_path) or where in e.message for e in errors)


def test_haproxycfg_model_output_validates_against_its_crd() -> None:
    cfg = HAProxyCfg(
        spec=HAProxyCfgSpec(content="global\n", checksum="abc"),
        status=HAProxyCfgStatus(deployed_to_pods=[PodDeploymentStatus(pod_name="p", sync_duration=1.5)]),
    )
    errors = [e.message for e in _validator("haproxy-haptic.org_haproxycfgs.yaml").iter_errors(cfg.to_json())]
    assert errors == []


@pytest.mark.parametrize("manifest", [REPO / "examples" / "ingress" / "haproxytemplateconfig.yaml",
                                      REPO / "deploy" / "haproxytemplateconfig.yaml"], ids=lambda p: p.name)
def test_shipped_configs_expanded_are_accepted_by_an_api_server_with_the_crds(manifest: Path) -> None:
    """Library-based configs are applied expanded (the CRD requires what libraries supply); what they hold
    then passes a validating API server, e.g. match_count's ``expected`` written as a bare integer."""
    from simulator.kube import FakeKubeAPI
    from simulator.local.objects import expand_template_libraries

    api = FakeKubeAPI()
    crd_type = api.resolve("apiextensions.k8s.io/v1", "customresourcedefinitions")
    for crd in all_crds().values():
        api.create(crd_type, None, crd)
    configs = api.resolve("haproxy-haptic.org/v1alpha1", "haproxytemplateconfigs")
    for doc in yaml.safe_load_all(manifest.read_text()):
        if not doc or doc.get("kind") != "HAProxyTemplateConfig":
            continue
        doc = expand_template_libraries(doc)
        namespace = doc["metadata"].get("namespace", "default")
        if namespace != "default":
            api.create(api.resolve("v1", "namespaces"), None, {"metadata": {"name": namespace}})
        stored = api.create(configs, namespace, doc, field_validation="Strict")
        assert stored["spec"]["haproxyConfig"] == doc["spec"]["haproxyConfig"]
