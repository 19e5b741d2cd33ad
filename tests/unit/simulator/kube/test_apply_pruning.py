"""Server-side apply drops a map entry its applier stopped applying as a whole, defaulted fields with it.

Found by the cluster backend on the local stack: applying a HAProxyTemplateConfig that watches
services and secrets, then one that does not, left `watchedResources.services` with only its
CRD-defaulted fields and the API refused the object ("apiVersion: Required value").
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from haptic.config.crds import all_crds
from simulator.kube import FakeKubeAPI
from tests.support.paths import REPO

MANAGER = "haptic-scenario"


def _config(name: str) -> dict[str, Any]:
    config = yaml.safe_load((REPO / "scenarios" / "configs" / name).read_text())
    config = copy.deepcopy(config)
    config["metadata"] = {"name": "hc", "namespace": "default"}
    return dict(config)


def test_an_entry_no_longer_applied_goes_with_its_defaults() -> None:
    api = FakeKubeAPI()
    for crd in all_crds().values():
        api.create(api.types.by_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition"), None, crd)
    rt = api.types.by_kind("haproxy-haptic.org/v1alpha1", "HAProxyTemplateConfig")
    assert rt is not None
    wide, narrow = _config("ingress-library.yaml"), _config("slots.yaml")
    api.patch(rt, "default", "hc", "apply", wide, None, manager=MANAGER, force=True)
    assert {"services", "secrets"} <= set(api.get(rt, "default", "hc")["spec"]["watchedResources"])
    api.patch(rt, "default", "hc", "apply", narrow, None, manager=MANAGER, force=True)
    watched = api.get(rt, "default", "hc")["spec"]["watchedResources"]
    assert sorted(watched) == ["endpoints", "ingresses"]
    assert watched["ingresses"]["resources"] == "ingresses"
