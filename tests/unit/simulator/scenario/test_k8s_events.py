"""Kubernetes Events in both API groups and status conditions, as scenario checks."""

from __future__ import annotations

from typing import Any

import yaml

from simulator.scenario.k8s_events import check_k8s_events, check_object_status, collect, fresh, normalize
from simulator.scenario.schema import KubeEventsExpectation, ObjectExpectation

CORE = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "slow.1", "namespace": "shop", "uid": "u1"},
        "involvedObject": {"kind": "Ingress", "namespace": "shop", "name": "slow"}, "reason": "IngressSkipped",
        "message": "spec.rules[0].host: invalid host", "type": "Warning", "source": {"component": "haptic"},
        "count": 2}
NEW = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "x.2", "namespace": "shop",
                                                                        "uid": "u2"},
       "regarding": {"kind": "Ingress", "namespace": "shop", "name": "fast"}, "reason": "Synced",
       "note": "deployed to 2 pods", "type": "Normal", "reportingController": "haptic-controller",
       "series": {"count": 3}}


def render(value: Any) -> str:
    return yaml.safe_dump(value)


def expect(**spec: Any) -> KubeEventsExpectation:
    return KubeEventsExpectation.model_validate(spec)


def test_both_api_groups_are_read_and_one_event_counts_once() -> None:
    as_new = {**NEW, "metadata": {**NEW["metadata"]}}
    events = collect([[CORE, NEW], [as_new]])
    assert [(e.object, e.reason, e.count, e.source) for e in events] == [
        ("Ingress/shop/fast", "Synced", 3, "haptic-controller"), ("Ingress/shop/slow", "IngressSkipped", 2, "haptic")]
    assert normalize(NEW).message == "deployed to 2 pods"


def test_present_and_absent_by_object_reason_type_and_message() -> None:
    events = collect([[CORE, NEW]])
    ok = expect(present=[{"object": "Ingress/shop/slow", "reason": "IngressSkipped", "type": "Warning",
                          "message": "invalid host"}, {"regex": r"deployed to \d pods", "source": "haptic-controller"}],
                absent=[{"object": "Ingress/shop/fast", "type": "Warning"}])
    assert check_k8s_events(ok, events, "in the cluster") == []
    bad = expect(present={"object": "Ingress/shop/slow", "reason": "Synced"},
                 absent={"reason": "IngressSkipped"})
    failures = check_k8s_events(bad, events, "in the cluster")
    assert [f.check for f in failures] == ["k8s_events.present", "k8s_events.absent"]
    assert "Warning IngressSkipped Ingress/shop/slow x2 (haptic)" in failures[0].actual
    assert "1 x Event(reason='IngressSkipped') in the cluster" in failures[1].message


def test_fresh_events_are_new_or_repeated_ones() -> None:
    events = collect([[CORE, NEW]])
    assert [e.uid for e in fresh(events, {"u1": 2, "u2": 1})] == ["u2"]
    assert fresh(events, {"u1": 2, "u2": 3}) == []


def test_conditions_present_and_absent() -> None:
    obj = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "RenderSkipped",
                                      "message": "Ingress shop/slow skipped: invalid host"}]}}
    spec = ObjectExpectation.model_validate({"kind": "Ingress", "conditions": [
        {"type": "Ready", "status": "False", "reason": "RenderSkipped", "message": "invalid host"}],
        "absent_conditions": "Degraded"})
    assert check_object_status("object", spec, obj, render) == []
    wrong = ObjectExpectation.model_validate({"kind": "Ingress", "conditions": [{"type": "Ready", "status": "True"}],
                                              "absent_conditions": ["Ready"]})
    failures = check_object_status("object", wrong, obj, render)
    assert [f.check for f in failures] == ["object.conditions", "object.absent_conditions"]
    assert "RenderSkipped" in failures[0].actual


def test_absent_fields() -> None:
    obj = {"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1", "ports": [{"port": 80, "error": "x/E"}]}]}}}
    spec = ObjectExpectation.model_validate({"kind": "Ingress",
                                             "absent_fields": "status.loadBalancer.ingress.0.ports.0.error"})
    [failure] = check_object_status("object", spec, obj, render)
    assert failure.check == "object.status.loadBalancer.ingress.0.ports.0.error"
    assert failure.message == "expected absent, is 'x/E'"
    del obj["status"]["loadBalancer"]["ingress"][0]["ports"][0]["error"]
    assert check_object_status("object", spec, obj, render) == []
