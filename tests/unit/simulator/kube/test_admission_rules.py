"""The fake API's webhook rule matching and its off-by-default admission hook."""

from __future__ import annotations

from typing import Any

from haptic.k8s.api import ResourceRef
from simulator.kube import FakeKubeAPI, InProcessKubeClient
from simulator.kube.admission import AdmissionAttempt, enable_admission, rule_matches
from simulator.kube.resources import BUILTIN_TYPES

INGRESSES = next(rt for rt in BUILTIN_TYPES if rt.plural == "ingresses")
NODES = next(rt for rt in BUILTIN_TYPES if rt.plural == "nodes")


def attempt(operation: str = "CREATE", subresource: str | None = None, rt: Any = INGRESSES) -> AdmissionAttempt:
    return AdmissionAttempt(operation, rt, "shop", "web", subresource, {"metadata": {"name": "web"}}, None)


RULE = {"apiGroups": ["networking.k8s.io"], "apiVersions": ["v1"], "resources": ["ingresses"],
        "operations": ["CREATE", "UPDATE"], "scope": "*"}


def test_rule_matching() -> None:
    assert rule_matches(RULE, attempt())
    assert rule_matches(RULE, attempt("UPDATE"))
    assert not rule_matches(RULE, attempt("DELETE"))
    assert not rule_matches(RULE, attempt(subresource="status"))
    assert rule_matches({**RULE, "resources": ["ingresses/status"]}, attempt("UPDATE", "status"))
    assert rule_matches({**RULE, "resources": ["*/*"]}, attempt("UPDATE", "status"))
    assert not rule_matches({**RULE, "resources": ["*"]}, attempt("UPDATE", "status"))
    assert not rule_matches({**RULE, "apiGroups": [""]}, attempt())
    assert rule_matches({**RULE, "apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"]}, attempt("DELETE"))
    assert not rule_matches({**RULE, "scope": "Cluster"}, attempt())
    assert rule_matches({**RULE, "apiGroups": [""], "resources": ["nodes"], "scope": "Cluster"}, attempt(rt=NODES))


async def test_hook_is_off_by_default_and_ignores_unregistered_writes() -> None:
    api = FakeKubeAPI()
    assert api.admission is None
    client = InProcessKubeClient(api)
    hook = enable_admission(api)
    ref = ResourceRef("v1", "configmaps", True, "ConfigMap")
    created = await client.create(ref, {"metadata": {"name": "c", "namespace": "default"}})
    assert created["metadata"]["name"] == "c" and hook.calls == 0
