"""examples/gateway-cluster (deploy/ with the Gateway API) agrees with itself and with the controller: the
expanded config is current, RBAC grants exactly what the gateway config needs, the Gateway's listener port is
free, exposed and allowed, and its GatewayClass names the controller."""

from __future__ import annotations

import importlib.util
from typing import Any

from haptic.config.models import load_config
from haptic.preflight.permissions import missing, required_permissions, unneeded
from haptic.validation.config_file import compile_config
from tests.support.paths import REPO
from tests.unit.deploy.test_manifests import all_objects, containers, documents, env, find
from tests.unit.deploy.test_rbac import ACCOUNT, bound_grants

OVERLAY = REPO / "examples" / "gateway-cluster"


def overlay_objects() -> list[dict[str, Any]]:
    kust = documents(OVERLAY / "kustomization.yaml")[0]
    assert kust["resources"][0] == "../../deploy"
    return [doc for resource in kust["resources"][1:] for doc in documents(OVERLAY / resource)]


def gateway_config() -> Any:
    return load_config(documents(OVERLAY / "haproxytemplateconfig.yaml")[0])


def test_the_expanded_config_is_current_and_compiles() -> None:
    spec = importlib.util.spec_from_file_location("expand", REPO / "scripts" / "expand_template_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = "examples/gateway-cluster/config/haproxytemplateconfig.yaml"
    expected = module.render(source, documents(REPO / source)[0])
    assert (OVERLAY / "haproxytemplateconfig.yaml").read_text() == expected, (
        f"stale; run: python scripts/expand_template_config.py {source} > "
        "examples/gateway-cluster/haproxytemplateconfig.yaml")
    compile_config(gateway_config(), object_name="examples/gateway-cluster/haproxytemplateconfig.yaml")
    base = documents(REPO / "deploy" / "haproxytemplateconfig.yaml")[0]
    overlay = documents(OVERLAY / "haproxytemplateconfig.yaml")[0]
    assert overlay["metadata"] == base["metadata"], "the overlay's config replaces the base's one (a patch)"
    assert set(base["spec"]["watchedResources"]) < set(overlay["spec"]["watchedResources"])


def test_rbac_grants_exactly_what_the_gateway_config_needs() -> None:
    deployment = find("Deployment", "haptic-controller")
    variables = env(containers(deployment)["controller"])
    needed = required_permissions(gateway_config().spec, namespace=deployment["metadata"]["namespace"],
                                  config_name=variables["CRD_NAME"], secret_name=variables["SECRET_NAME"],
                                  webhook=bool(variables.get("WEBHOOK_CERT_DIR")))
    grants = bound_grants(all_objects() + overlay_objects(), ACCOUNT, "haptic-system")
    assert [p.describe() for p in missing(needed, grants)] == []
    assert unneeded(needed, grants) == []
    assert any("gateways/status" in p.describe() for p in needed)


def test_the_gateway_listens_on_a_free_port_the_service_and_policy_open() -> None:
    objects = {o["kind"]: o for o in overlay_objects()}
    extra = gateway_config().spec.templating_settings.extra_context
    assert objects["GatewayClass"]["spec"]["controllerName"] == extra["gatewayControllerName"]
    assert objects["Gateway"]["spec"]["gatewayClassName"] == objects["GatewayClass"]["metadata"]["name"]
    ports = {listener["port"] for listener in objects["Gateway"]["spec"]["listeners"]}
    assert not ports & {extra["httpPort"], extra["httpsPort"], extra["statsPort"]}, "PortUnavailable"
    patches = "\n".join(str(p.get("patch", "")) for p in documents(OVERLAY / "kustomization.yaml")[0]["patches"])
    for port in ports:
        assert f"targetPort: {port}" in patches and f"port: {port}}}" in patches
