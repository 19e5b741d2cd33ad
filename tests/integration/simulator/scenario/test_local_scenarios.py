"""Scenarios on the ``local`` backend: real haproxy pods, the controller as a subprocess, real traffic."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

REPO = REPO
SIM = [sys.executable, "-m", "simulator.cli"]

SCENARIO = """\
name: local-traffic
description: traffic reaches the echo server promoted from the scenario's endpoint address
seed: 3
setup:
  pods: 1
  config: {{file: configs/slots.yaml}}
  objects: [{{file: objects/api.yaml}}]
steps:
  - expect:
      config: {{contains: "server SRV_1 10.2.0.1:8080"}}
      events: {{since: start, present: [deployment.completed]}}
      traffic: {{host: api.example, path: /, status: 200, backend: {backend}}}
"""


@pytest.fixture
def scenario_dir(tmp_path: Path, haproxy_bin: str) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "objects").mkdir()
    shutil.copy(REPO / "scenarios" / "configs" / "slots.yaml", tmp_path / "configs" / "slots.yaml")
    shutil.copy(REPO / "scenarios" / "objects" / "api.yaml", tmp_path / "objects" / "api.yaml")
    return tmp_path


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_traffic_and_the_controllers_events_are_checked(scenario_dir: Path) -> None:
    (scenario_dir / "ok.yaml").write_text(SCENARIO.format(backend="10.2.0.1"))
    done = run([*SIM, "run", "--backend", "local", "ok.yaml"], scenario_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS  local-traffic [local]" in done.stdout
    assert "not applicable" not in done.stdout  # events come from the replica's /debug/events


def test_an_event_that_did_not_happen_fails_the_local_run(scenario_dir: Path) -> None:
    text = SCENARIO.format(backend="10.2.0.1").replace("present: [deployment.completed]",
                                                       "present: [validation.failed]")
    (scenario_dir / "no-event.yaml").write_text(text)
    done = run([*SIM, "run", "--backend", "local", "no-event.yaml"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "events.present" in output and "no validation.failed since the start" in output
    assert "controller-0" in output  # the listing shows what the replica did publish


def test_traffic_to_the_wrong_backend_fails_with_what_answered(scenario_dir: Path) -> None:
    (scenario_dir / "bad.yaml").write_text(SCENARIO.format(backend="10.9.9.9"))
    done = run([*SIM, "run", "--backend", "local", "bad.yaml"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "traffic[GET api.example/].backend" in output
    assert "expected backend 10.9.9.9, got 10.2.0.1" in output


NO_LEADER = """\
name: no-leader
description: the only replica is down while an Ingress is added
seed: 3
setup:
  pods: 1
  config: {file: configs/slots.yaml}
  objects: [{file: objects/api.yaml}]
steps:
  - fault: {inject: {kind: leader_loss, duration: 5m}}
  - apply: {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: late, namespace: default},
            spec: {ingressClassName: haptic, rules: [{host: late.example, http: {paths: [{path: /, pathType: Prefix,
            backend: {service: {name: api, port: {number: 80}}}}]}}]}}
  - settle: 15s
invariants: {converge_after_faults: null}
"""


def test_settle_without_a_leader_fails_saying_so(scenario_dir: Path) -> None:
    """The old settle called a quiet installation settled although nothing could deploy the change."""
    (scenario_dir / "no-leader.yaml").write_text(NO_LEADER)
    done = run([*SIM, "run", "--backend", "local", "no-leader.yaml"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "step 3 (settle): invariant settle: not converged 15s after" in done.stdout
    assert "no replica leads (0 of 1 running)" in done.stdout


def test_the_divergence_report_names_the_check_that_differs(scenario_dir: Path) -> None:
    """Traffic to a backend that is not there fails on local and is not applicable on sim: the verdicts
    differ, and the report names the traffic check of step 1."""
    (scenario_dir / "bad.yaml").write_text(SCENARIO.format(backend="10.9.9.9"))
    done = run([*SIM, "run", "--backend", "sim,local", "bad.yaml"], scenario_dir)
    assert done.returncode == 1, done.stdout + done.stderr
    table = done.stdout.split("first difference", 1)[1]  # the divergence report, after the summary table
    [row] = [line for line in table.splitlines() if line.startswith("local-traffic  ")]
    assert row.split()[1:3] == ["PASS", "FAIL"], row
    assert "step 1 (expect) traffic: sim n/a" in row and "local fail (traffic[GET api.example/].backend" in row, row
    assert "1 of 1 scenario cell(s) diverge between sim and local" in done.stdout
