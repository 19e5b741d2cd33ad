"""`haptic preflight` against a running local stack taken as the cluster: the fake API over HTTP (the
official client), its fake Dataplane pods driving real haproxy. What is right passes; a stale CRD, a
pod whose HAProxy version the controller would not admit and a missing webhook certificate fail with
what to fix; the exit status says whether everything passed."""

from __future__ import annotations

import asyncio
import copy
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from simulator.local.stack import LocalStack, StackOptions
from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy
NS, CONFIG = "haptic-system", "haptic-config"


@pytest.fixture
async def stack(haproxy_bin: str) -> AsyncIterator[LocalStack]:
    options = StackOptions(pods=2, replicas=1, haproxy_bin=haproxy_bin, namespace=NS, config_name=CONFIG,
                           log_level="warning")
    async with LocalStack(options) as running:
        assert await running.settle(60.0)
        yield running


async def preflight(stack: LocalStack, *extra: str) -> tuple[int, str]:
    assert stack.kube_server is not None
    env = {**os.environ, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "haptic.cli", "preflight", "--server", stack.kube_server.url, "--namespace", NS,
               "--config-name", CONFIG, *extra]
    done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, timeout=120,
                                   check=False)
    return done.returncode, done.stdout + done.stderr


def rows(output: str) -> dict[str, str]:
    found = {}
    for line in output.splitlines():
        if line.startswith(("PASS ", "FAIL ")):
            result, _, rest = line.partition("  ")
            found[rest.strip().split("  ")[0]] = result.strip()
    return found


async def test_an_installation_without_rbac_passes_all_but_permissions(stack: LocalStack) -> None:
    code, out = await preflight(stack, "--no-webhook")
    table = rows(out)
    for name in ("CRD haproxycfgs.haproxy-haptic.org", "CRD haproxytemplateconfigs.haproxy-haptic.org",
                 f"HAProxyTemplateConfig {NS}/{CONFIG}", "HAProxy pod haproxy-0", "HAProxy pod haproxy-1"):
        assert table.get(name) == "PASS", out
    # no RBAC objects in this cluster: the ServiceAccount may do nothing, and preflight says so
    permissions = f"permissions of system:serviceaccount:{NS}:haptic-controller"
    assert table[permissions] == "FAIL" and "denied" in out and code == 1, out
    assert "checks passed" in out.splitlines()[-1]


async def test_problems_fail_with_what_to_fix(stack: LocalStack, tmp_path: Path) -> None:
    rt = stack.kube.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert rt is not None
    crd = copy.deepcopy(stack.kube.get(rt, None, "haproxycfgs.haproxy-haptic.org"))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "an older build's"
    stack.kube.update(rt, None, "haproxycfgs.haproxy-haptic.org", crd)
    old_haproxy = tmp_path / "haproxy"
    old_haproxy.write_text("#!/bin/sh\necho 'HAProxy version 9.1.2-1 2031/04/01 - https://haproxy.org/'\n")
    old_haproxy.chmod(old_haproxy.stat().st_mode | stat.S_IEXEC)
    code, out = await preflight(stack, "--haproxy-binary", str(old_haproxy))
    table = rows(out)
    assert code == 1
    assert table["CRD haproxycfgs.haproxy-haptic.org"] == "FAIL" and "schema of v1alpha1 differs" in out, out
    assert table["HAProxy pod haproxy-0"] == "FAIL" and "the controller validates with haproxy 9.1" in out, out
    assert table[f"webhook certificate {NS}/haproxy-webhook-certs"] == "FAIL"
    assert table["ValidatingWebhookConfiguration haptic-validating-webhook"] == "FAIL"
    fixes = out.split("To fix:")[1]
    assert "kubectl apply -f deploy/crds" in fixes and "deploy/webhook-certs-job.yaml" in fixes
    assert "deploy/Dockerfile HAPROXY_IMAGE" in fixes


def load_rbac(stack: LocalStack, drop_pods: bool = False) -> None:
    import yaml

    for obj in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()):
        if drop_pods and obj["kind"] == "Role":
            obj = {**obj, "rules": [r for r in obj["rules"] if r["resources"] != ["pods"]]}
        stack.apply(obj)


async def test_permissions_are_asked_as_the_controllers_service_account(stack: LocalStack) -> None:
    """With deploy/rbac.yaml in the cluster every permission is allowed to the ServiceAccount (asked by
    SelfSubjectAccessReview under impersonation); without the pods rule, preflight names what is missing."""
    load_rbac(stack)
    permissions = f"permissions of system:serviceaccount:{NS}:haptic-controller"
    code, out = await preflight(stack, "--no-webhook")
    assert rows(out)[permissions] == "PASS", out
    load_rbac(stack, drop_pods=True)
    code, out = await preflight(stack, "--no-webhook")
    assert rows(out)[permissions] == "FAIL" and code == 1, out
    assert "2 of" in out and "list pods in haptic-system" in out and "watch pods in haptic-system" in out, out
