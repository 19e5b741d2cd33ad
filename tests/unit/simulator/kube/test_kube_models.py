"""The built-in kinds' fields come from the official client's models, through a generated data file."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from haptic.k8s.api import ApiError
from simulator.kube import FakeKubeAPI
from simulator.kube.field_validation import collecting
from simulator.kube.models import _DATA, model_for

_GENERATOR = Path(__file__).resolve().parents[4] / "scripts" / "gen_kube_models.py"


def test_data_file_matches_the_installed_client() -> None:
    spec = importlib.util.spec_from_file_location("gen_kube_models", _GENERATOR)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    # what the client's models say, not its release: a patch release describing the kinds alike changes nothing
    recorded, installed = json.loads(_DATA.read_text()), json.loads(generator.render())
    assert recorded.pop("client") and installed.pop("client")
    assert recorded == installed, "the client's models changed: run python scripts/gen_kube_models.py"


def test_kinds_resolve_to_the_clients_models() -> None:
    assert model_for("apps", "v1", "Deployment") == "V1Deployment"
    assert model_for("", "v1", "Event") == "CoreV1Event"
    assert model_for("events.k8s.io", "v1", "Event") == "EventsV1Event"
    assert model_for("networking.k8s.io", "v1", "Ingress") == "V1Ingress"
    assert model_for("example.com", "v1", "Widget") is None


def test_undeclared_fields_of_built_ins_are_dropped_warned_or_refused() -> None:
    api = FakeKubeAPI()
    rt = api.resolve("apps/v1", "deployments")
    container = {"name": "web", "image": "x", "imagePullPolcy": 1}
    body = {"metadata": {"name": "d"}, "spec": {"replica": 2, "selector": {"matchLabels": {"a": "b"}},
                                                "template": {"metadata": {"labels": {"a": "b"}},
                                                             "spec": {"containers": [container]}}}}
    rv = api.resource_version
    with pytest.raises(ApiError) as info:
        api.create(rt, "default", body, field_validation="Strict")
    assert (info.value.code, info.value.message) == (400, (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field '
        '"spec.replica", unknown field "spec.template.spec.containers[0].imagePullPolcy"'))
    with pytest.raises(ApiError) as applied:
        api.patch(rt, "default", "d", "apply", {"apiVersion": "apps/v1", "kind": "Deployment", **body}, manager="m")
    assert applied.value.message == (
        "failed to create typed patch object (default/d; apps/v1, Kind=Deployment): errors:\n"
        "  .spec.replica: field not declared in schema\n"
        '  .spec.template.spec.containers[name="web"].imagePullPolcy: field not declared in schema')
    assert api.resource_version == rv
    with collecting() as warnings:
        created = api.create(rt, "default", body)
    assert warnings == ['unknown field "spec.replica"',
                        'unknown field "spec.template.spec.containers[0].imagePullPolcy"']
    assert "replica" not in created["spec"]
    assert "imagePullPolcy" not in created["spec"]["template"]["spec"]["containers"][0]
