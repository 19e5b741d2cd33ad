"""``k8s_events`` and ``object`` conditions on the ``sim`` backend, against the fake API's own Events.

The Events are applied directly (core/v1 and events.k8s.io/v1), so the checks are tested independently
of which controller component reports them.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from simulator.scenario.loader import load_cells
from simulator.scenario.runner import run_cell_with
from simulator.scenario.sim_backend import SimFactory
from tests.support.paths import REPO

SCENARIO = """\
name: k8s-events
description: Events in both API groups, status conditions of a pod
setup:
  pods: 1
  config: {file: slots.yaml}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web-0, namespace: default}
      spec: {containers: [{name: web, image: web:1}]}
      status: {phase: Running, conditions: [{type: Ready, status: "True"}, {type: PodScheduled, status: "True"}]}
steps:
  - apply:
      - apiVersion: v1
        kind: Event
        metadata: {name: slow.1, namespace: default}
        involvedObject: {kind: Ingress, namespace: default, name: slow, apiVersion: networking.k8s.io/v1}
        reason: IngressSkipped
        message: "spec.rules[0].host: not a valid host"
        type: Warning
        source: {component: haptic}
  - expect:
      k8s_events:
        present: [{object: Ingress/default/slow, reason: IngressSkipped, type: Warning, message: not a valid host}]
        absent: [{object: Ingress/default/slow, type: Normal}]
      object:
        kind: Pod
        namespace: default
        name: web-0
        conditions: [{type: Ready, status: "True"}]
        absent_conditions: [Degraded]
  - apply:
      - apiVersion: events.k8s.io/v1
        kind: Event
        metadata: {name: fast.1, namespace: default}
        eventTime: "2025-01-01T00:00:10.000000Z"
        regarding: {kind: Ingress, namespace: default, name: fast}
        reason: Synced
        note: deployed to 1 pod
        type: Normal
        action: Deploy
        reportingController: haptic.haproxy-haptic.org/controller
        reportingInstance: controller-0
  - expect:
      k8s_events:
        since: previous_expect
        present: [{object: Ingress/default/fast, reason: Synced, source: haptic.haproxy-haptic.org/controller}]
        absent: [{reason: IngressSkipped}]
"""


def _run(tmp_path: Path, text: str, haproxy_bin: str):  # type: ignore[no-untyped-def]
    shutil.copy(REPO / "scenarios" / "configs" / "slots.yaml", tmp_path / "slots.yaml")
    (tmp_path / "s.yaml").write_text(textwrap.dedent(text))
    [cell] = load_cells(tmp_path / "s.yaml")
    return run_cell_with(cell, SimFactory(haproxy_bin))


def test_events_of_both_groups_and_conditions_pass(tmp_path: Path, haproxy_bin: str) -> None:
    result = _run(tmp_path, SCENARIO, haproxy_bin)
    assert result.status == "passed", result.report()


def test_an_event_that_was_not_reported_fails_with_the_listing(tmp_path: Path, haproxy_bin: str) -> None:
    text = SCENARIO.replace("absent: [{reason: IngressSkipped}]", "absent: []").replace(
        "present: [{object: Ingress/default/fast, reason: Synced,", "present: [{object: Ingress/default/slow, "
                                                                     "reason: IngressSkipped,")
    result = _run(tmp_path, text, haproxy_bin)
    assert result.status == "failed"
    report = result.report()
    assert "k8s_events.present: no Event(object='Ingress/default/slow', reason='IngressSkipped'" in report
    assert "since the previous expect" in report
    assert "Normal Synced Ingress/default/fast x1" in report


def test_a_condition_that_is_not_set_fails(tmp_path: Path, haproxy_bin: str) -> None:
    result = _run(tmp_path, SCENARIO.replace('conditions: [{type: Ready, status: "True"}]',
                                             'conditions: [{type: Ready, status: "False"}]'), haproxy_bin)
    assert result.status == "failed"
    assert "object[Pod/default/web-0].conditions: no condition {'type': 'Ready', 'status': 'False'}" in \
        result.report()
