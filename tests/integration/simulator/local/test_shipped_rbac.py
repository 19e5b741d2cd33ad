"""The controller run by the local tier as its ServiceAccount, with exactly the rules of deploy/rbac.yaml,
against a fake API that enforces RBAC: enough for a whole run (config loaded, deployment done, status
written), and one rule less makes it fail with the API server's 403 naming the verb and resource."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from haptic import commands as haptic_commands
from haptic.k8s.api import NotFound
from simulator.kube import write_kubeconfig
from simulator.local import LocalStack, StackOptions, objects
from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy
HOST = "rbac.local.test"
NAMESPACE = "haptic-system"  # where deploy/ puts the controller
SA_USER = f"system:serviceaccount:{NAMESPACE}:haptic-controller"
Manifests = list[dict[str, Any]]


def shipped_rbac() -> Manifests:
    return [d for d in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()) if d]


def without_rule(manifests: Manifests, kind: str, resource: str, verb: str) -> Manifests:
    """The manifests with ``verb`` on ``resource`` taken out of the ``kind`` (Role or ClusterRole)."""
    changed = copy.deepcopy(manifests)
    found = False
    for doc in changed:
        if doc["kind"] != kind:
            continue
        for rule in doc["rules"]:
            if resource in rule.get("resources", []) and verb in rule["verbs"]:
                rule["verbs"] = [v for v in rule["verbs"] if v != verb]
                found = True
        doc["rules"] = [r for r in doc["rules"] if r["verbs"]]
    assert found, f"deploy/rbac.yaml has no {kind} rule granting {verb} on {resource}"
    return changed


async def start_as_service_account(haproxy_bin: str, workdir: Path, rbac: Manifests) -> LocalStack:
    if not (Path(haptic_commands.__file__).parent / "run.py").exists():
        pytest.skip("the controller's `haptic run` is not part of this build")
    stack = LocalStack(StackOptions(pods=1, haproxy_bin=haproxy_bin, workdir=workdir, namespace=NAMESPACE,
                                    start_controller=False, reload_delay=0.05))
    try:
        await stack.start()
        assert stack.kube_server is not None
        auth = stack.kube_server.auth
        auth.enable()
        for doc in rbac:
            stack.apply(doc)
        token = auth.tokens.request(NAMESPACE, "haptic-controller", {})["status"]["token"]
        kubeconfig = write_kubeconfig(workdir / "controller-kubeconfig", stack.kube_server.url, token=token,
                                      namespace=NAMESPACE)
        stack.options.controller_env["KUBECONFIG"] = str(kubeconfig)
        await stack.start_controller(0)
    except BaseException:
        await stack.stop()
        raise
    return stack


async def serve_one_ingress(stack: LocalStack) -> None:
    echo = await stack.add_echo()
    stack.apply(objects.namespace("apps"))
    stack.apply(objects.service("web", "apps"))
    stack.set_endpoints("web", "apps", [echo])
    stack.apply(objects.ingress("web", "apps", HOST, "web"))


def stored(stack: LocalStack, api_version: str, kind: str, ns: str, name: str) -> dict[str, Any] | None:
    rt = stack.kube.types.by_kind(api_version, kind)
    assert rt is not None
    try:
        return stack.kube.get(rt, ns, name)
    except NotFound:
        return None


def forbidden_lines(stack: LocalStack) -> list[str]:
    controller = stack.controller
    assert controller is not None
    return [line for line in controller.lines if "is forbidden: User" in line]


async def test_the_shipped_rules_are_enough_for_a_whole_run(haproxy_bin: str, tmp_path: Path) -> None:
    stack = await start_as_service_account(haproxy_bin, tmp_path / "stack", shipped_rbac())
    try:
        await serve_one_ingress(stack)
        report = await stack.wait_for_traffic(0, HOST, lambda r: r.flowed, within=60)
        assert report.flowed, report.summary()
        assert await stack.settle(within=30)
        published = stack.published_config()
        assert published is not None and "ing_apps_web" in published
        config = stored(stack, "haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig", NAMESPACE,
                        stack.options.config_name)
        assert config is not None and config.get("status"), "the controller wrote no HAProxyTemplateConfig status"
        ingress = stored(stack, "networking.k8s.io/v1", "Ingress", "apps", "web")
        assert ingress is not None and (ingress.get("status") or {}).get("loadBalancer", {}).get("ingress")
        lease = stored(stack, "coordination.k8s.io/v1", "Lease", NAMESPACE, "haptic-leader")
        assert lease is not None and lease["spec"]["holderIdentity"] == "haptic-controller-0"
        assert forbidden_lines(stack) == []
        assert stack.kube_server is not None
        denied = [entry for entry in stack.kube_server.request_log if entry[2] == 403]
        assert denied == [], denied
    finally:
        await stack.stop()


@pytest.mark.parametrize(("kind", "resource", "verb", "scope"), [
    ("ClusterRole", "ingresses", "watch", 'resource "ingresses" in API group "networking.k8s.io" at the cluster scope'),
    ("Role", "leases", "create",
     f'resource "leases" in API group "coordination.k8s.io" in the namespace "{NAMESPACE}"'),
])
async def test_one_rule_less_fails_with_a_403_naming_verb_and_resource(
        haproxy_bin: str, tmp_path: Path, kind: str, resource: str, verb: str, scope: str) -> None:
    stack = await start_as_service_account(haproxy_bin, tmp_path / "stack",
                                           without_rule(shipped_rbac(), kind, resource, verb))
    try:
        await serve_one_ingress(stack)
        controller = stack.controller
        assert controller is not None
        wanted = f'is forbidden: User "{SA_USER}" cannot {verb} {scope}'

        def names_it(line: str) -> bool:  # the log quotes the API's message (its quotes escaped)
            return wanted in line.replace('\\"', '"')

        line = await controller.wait_for_line(names_it, within=60)
        assert line is not None, "\n".join(list(controller.lines)[-40:])
        assert stack.published_config() is None  # nothing deployed without the missing permission
    finally:
        await stack.stop()
