"""deploy/rbac.yaml grants exactly what haptic/preflight/permissions.py says the controller needs for the
shipped config: nothing missing (the controller would get 403s) and nothing more (least privilege),
namespaced where the objects are the controller's own."""

from __future__ import annotations

from typing import Any

from haptic.preflight.permissions import (
    WEBHOOK_CONFIGURATION_NAME,
    Grant,
    Permission,
    grants_from_rules,
    missing,
    required_permissions,
    unneeded,
)
from tests.unit.deploy.test_manifests import all_objects, config, config_cr, containers, env, find

ACCOUNT = "haptic-controller"


def bound_grants(objects: list[dict[str, Any]], account: str, namespace: str) -> list[Grant]:
    """What the bindings give ServiceAccount ``namespace/account``: ClusterRoleBindings everywhere,
    RoleBindings in their namespace (whatever role kind they name)."""
    roles = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects
             if o["kind"] in ("Role", "ClusterRole")}
    grants: list[Grant] = []
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        subjects = binding.get("subjects") or []
        if not any(s["kind"] == "ServiceAccount" and s["name"] == account and s.get("namespace") == namespace
                   for s in subjects):
            continue
        scope = binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding" else None
        ref = binding["roleRef"]
        role = roles[(ref["kind"], scope if ref["kind"] == "Role" else None, ref["name"])]
        grants += grants_from_rules(role["rules"], scope, f"{binding['kind']}/{binding['metadata']['name']}")
    return grants


def needed() -> list[Permission]:
    deployment = find("Deployment", "haptic-controller")
    variables = env(containers(deployment)["controller"])
    return required_permissions(config().spec, namespace=deployment["metadata"]["namespace"],
                                config_name=variables["CRD_NAME"], secret_name=variables["SECRET_NAME"],
                                webhook=bool(variables.get("WEBHOOK_CERT_DIR")))


def test_the_controller_has_every_permission_it_needs() -> None:
    grants = bound_grants(all_objects(), ACCOUNT, "haptic-system")
    assert [p.describe() for p in missing(needed(), grants)] == []


def test_the_controller_has_nothing_more() -> None:
    grants = bound_grants(all_objects(), ACCOUNT, "haptic-system")
    assert unneeded(needed(), grants) == []


def test_its_own_objects_are_granted_in_its_namespace_only() -> None:
    cluster_wide = [g for g in bound_grants(all_objects(), ACCOUNT, "haptic-system") if g.namespace is None]
    for grant in cluster_wide:
        assert not grant.resources & {"pods", "haproxytemplateconfigs", "haproxycfgs", "leases"}, grant
        assert "get" not in grant.verbs or grant.names, grant  # no cluster-wide reads of single objects


def test_single_objects_are_granted_by_name() -> None:
    grants = bound_grants(all_objects(), ACCOUNT, "haptic-system")
    webhook = [g for g in grants if "validatingwebhookconfigurations" in g.resources]
    assert webhook and all(g.names == {WEBHOOK_CONFIGURATION_NAME} for g in webhook)
    secret_get = [g for g in grants if "secrets" in g.resources and "get" in g.verbs]
    assert secret_get and all(g.names == {config().spec.credentials_secret_ref.name} for g in secret_get)
    cfg = f"{config_cr()['metadata']['name']}-haproxycfg"
    patches = [g for g in grants if g.resources & {"haproxycfgs", "haproxycfgs/status"} and "patch" in g.verbs]
    assert patches and all(g.names == {cfg} for g in patches)


def test_the_check_finds_a_missing_and_an_extra_rule() -> None:
    objects = all_objects()
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == ACCOUNT)
    trimmed = {**role, "rules": [r for r in role["rules"] if r["resources"] != ["pods"]]}
    widened = {**role, "rules": [*role["rules"], {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}
    without_pods = [trimmed if o is role else o for o in objects]
    with_configmaps = [widened if o is role else o for o in objects]
    lost = missing(needed(), bound_grants(without_pods, ACCOUNT, "haptic-system"))
    assert {p.describe() for p in lost} == {"list pods in haptic-system", "watch pods in haptic-system"}
    assert unneeded(needed(), bound_grants(with_configmaps, ACCOUNT, "haptic-system")) == [
        "RoleBinding/haptic-controller: get configmaps.core in haptic-system"]


def test_the_certificate_job_may_write_only_its_secret() -> None:
    grants = bound_grants(all_objects(), "haptic-webhook-certs", "haptic-system")
    assert grants and all(g.namespace == "haptic-system" and g.resources == {"secrets"} for g in grants)
    assert all(g.names == {"haproxy-webhook-certs"} for g in grants if g.verbs - {"create"})
