"""The manifests under deploy/ agree with each other and with the controller's configuration:
names, labels, ports, directories, sockets and the RBAC rules the watched resources need."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from haptic.config.models import HAProxyTemplateConfig, load_config
from haptic.names import LIBRARIES_ANNOTATION
from haptic.templating.libraries import expand_libraries
from haptic.validation.config_file import compile_config
from simulator.local import objects

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
JSON = dict[str, Any]


def documents(path: Path) -> list[JSON]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def kustomization() -> JSON:
    return documents(DEPLOY / "kustomization.yaml")[0]


def all_objects() -> list[JSON]:
    return [doc for resource in kustomization()["resources"] for doc in documents(DEPLOY / resource)]


def find(kind: str, name: str) -> JSON:
    matches = [o for o in all_objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} objects"
    return matches[0]


def config_cr() -> JSON:
    return find("HAProxyTemplateConfig", "haptic-config")


def config() -> HAProxyTemplateConfig:
    return load_config(expand_libraries(config_cr()))


def containers(deployment: JSON) -> dict[str, JSON]:
    return {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}


def env(container: JSON) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def test_every_resource_and_generated_file_exists_and_parses() -> None:
    kust = kustomization()
    for resource in kust["resources"]:
        assert (DEPLOY / resource).is_file(), resource
    for generator in kust["configMapGenerator"]:
        for file in generator["files"]:
            assert (DEPLOY / file).is_file(), file
    for obj in all_objects():
        assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name"), obj
    namespaced = [o for o in all_objects() if o["kind"] not in
                  ("Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "IngressClass")]
    assert {o["metadata"].get("namespace") for o in namespaced} == {kust["namespace"]}


def test_the_config_is_valid_and_compiles() -> None:
    loaded = config()
    compile_config(loaded, object_name="deploy/haproxytemplateconfig.yaml")
    assert loaded.spec.controller.leader_election.enabled


def test_controller_deployment_points_at_the_config_and_secret() -> None:
    deployment = find("Deployment", "haptic-controller")
    assert deployment["spec"]["replicas"] == 2
    controller = containers(deployment)["controller"]
    variables = env(controller)
    assert variables["CRD_NAME"] == config_cr()["metadata"]["name"]
    assert variables["SECRET_NAME"] == config().spec.credentials_secret_ref.name
    assert variables["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert variables["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    ports = {p["name"]: p["containerPort"] for p in controller["ports"]}
    assert ports == {"debug": int(variables["DEBUG_PORT"]), "metrics": int(variables["METRICS_PORT"]),
                     "webhook": int(variables["WEBHOOK_PORT"])}
    sa = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    assert find("ServiceAccount", sa)
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    for service in ("haptic-controller-metrics", "haptic-controller-debug", "haptic-controller-webhook"):
        spec = find("Service", service)["spec"]
        assert spec["selector"].items() <= labels.items()
        assert {p["targetPort"] for p in spec["ports"]} <= set(ports)


def test_haproxy_pods_are_what_the_controller_discovers() -> None:
    spec = config().spec
    deployment = find("Deployment", "haproxy")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert spec.pod_selector.match_labels.items() <= labels.items()
    by_name = containers(deployment)
    assert {c["image"] for c in by_name.values()} == {"haproxytech/haproxy-debian:3.0"}
    dataplane_ports = [c for c in by_name.values() if any(p["containerPort"] == spec.dataplane.port
                                                          for p in c.get("ports", []))]
    assert [c["name"] for c in dataplane_ports] == ["dataplane"]
    extra = spec.templating_settings.extra_context
    haproxy_ports = {p["name"]: p["containerPort"] for p in by_name["haproxy"]["ports"]}
    assert haproxy_ports == {"http": extra["httpPort"], "https": extra["httpsPort"], "stats": extra["statsPort"]}
    assert find("IngressClass", extra["ingressClass"])["spec"]["controller"] == "haproxy-haptic.org/controller"
    assert find("Secret", spec.credentials_secret_ref.name)["stringData"].keys() == {
        "dataplane_username", "dataplane_password"}


def test_dataplaneapi_config_matches_haproxy_and_the_controller() -> None:
    spec = config().spec
    dpapi = documents(DEPLOY / "haproxy" / "dataplaneapi.yaml")[0]
    assert dpapi["dataplaneapi"]["port"] == spec.dataplane.port
    assert dpapi["dataplaneapi"]["disable_inotify"] is True
    resources = dpapi["dataplaneapi"]["resources"]
    assert resources["maps_dir"] == spec.dataplane.maps_dir
    assert resources["ssl_certs_dir"] == spec.dataplane.ssl_certs_dir
    assert resources["general_storage_dir"] == spec.dataplane.general_storage_dir
    assert dpapi["haproxy"]["config_file"] == spec.dataplane.config_file
    assert dpapi["haproxy"]["master_worker_mode"] is True
    haproxy_args = containers(find("Deployment", "haproxy"))["haproxy"]["args"]
    master_socket = haproxy_args[haproxy_args.index("-S") + 1].split(",")[0]
    assert dpapi["haproxy"]["master_runtime"] == master_socket
    assert haproxy_args[haproxy_args.index("-f") + 1] == spec.dataplane.config_file
    users = dpapi["dataplaneapi"]["user"]
    assert [u["password"] for u in users] == ["__DATAPLANE_PASSWORD__"]  # filled from the Secret at start


def crd_schema(plural: str) -> JSON:
    crd = documents(DEPLOY / "crds" / f"haproxy-haptic.org_{plural}.yaml")[0]
    schema: JSON = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("source", ["deploy", "demo"])
def test_configs_pass_the_crd_schema(source: str) -> None:
    """What the API server would check on create (the structural schema; x-kubernetes-* keys aside)."""
    cr = config_cr() if source == "deploy" else objects.expand_template_libraries(objects.demo_template_config(
        "cfg", "haptic", pod_labels={"app": "haproxy"}, dataplane_port=5001, http_port=5002, https_port=5003,
        stats_port=5004, secret_name="creds"))
    jsonschema.validate(cr, crd_schema("haproxytemplateconfigs"))
    broken = {**cr, "spec": {**cr["spec"], "dataplane": {"port": 70000}}}
    with pytest.raises(jsonschema.ValidationError, match="70000"):
        jsonschema.validate(broken, crd_schema("haproxytemplateconfigs"))


def test_library_based_configs_pass_the_crd_schema_as_written() -> None:
    """The short form (libraries named by annotation) is what a user applies; the schema leaves the fields
    a library supplies optional, and still requires what no library gives."""
    short = documents(DEPLOY / "config" / "haproxytemplateconfig.yaml")[0]
    assert "watchedResources" not in short["spec"]
    jsonschema.validate(short, crd_schema("haproxytemplateconfigs"))
    without_pods = {**short, "spec": {k: v for k, v in short["spec"].items() if k != "podSelector"}}
    with pytest.raises(jsonschema.ValidationError, match="'podSelector' is a required property"):
        jsonschema.validate(without_pods, crd_schema("haproxytemplateconfigs"))


def test_the_deployed_config_is_the_expanded_source() -> None:
    spec = importlib.util.spec_from_file_location("expand", DEPLOY.parent / "scripts" / "expand_template_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = "deploy/config/haproxytemplateconfig.yaml"
    expected = module.render(source, documents(DEPLOY / "config" / "haproxytemplateconfig.yaml")[0])
    assert (DEPLOY / "haproxytemplateconfig.yaml").read_text() == expected, (
        "deploy/haproxytemplateconfig.yaml is stale; run: python scripts/expand_template_config.py "
        f"{source} > deploy/haproxytemplateconfig.yaml")
    assert LIBRARIES_ANNOTATION not in str(config_cr())
