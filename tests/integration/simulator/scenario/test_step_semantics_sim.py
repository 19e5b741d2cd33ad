"""Steps mean what they say on ``sim``: ``settle`` is convergence (not a quiet trace), and a crash of the
leader (``leader_loss`` without ``duration``) is a failover to another replica."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from simulator.scenario.loader import load_cells
from simulator.scenario.runner import CellResult, run_cell_with
from simulator.scenario.sim_backend import SimFactory
from tests.support.paths import REPO

pytestmark = pytest.mark.haproxy


def run(tmp_path: Path, body: str) -> CellResult:
    for sub, name in (("configs", "slots.yaml"), ("objects", "web.yaml"), ("objects", "api.yaml")):
        (tmp_path / sub).mkdir(exist_ok=True)
        shutil.copy(REPO / "scenarios" / sub / name, tmp_path / sub / name)
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(body))
    [cell] = load_cells(path)
    return run_cell_with(cell, SimFactory())


def test_settle_without_a_leader_fails_saying_so(tmp_path: Path) -> None:
    """The leader is down for 5 minutes and nobody else can lead: nothing deploys the new Ingress, so a
    settle within that time is not converged (it returned on a quiet trace before)."""
    result = run(tmp_path, """\
        name: no-leader
        description: the only replica is down while an Ingress is added
        setup: {pods: 1, replicas: 1, config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - fault: {inject: {kind: leader_loss, duration: 5m}}
          - apply: {file: objects/api.yaml}
          - settle: 1m
        invariants: {converge_after_faults: null}
        """)
    assert result.status == "failed", result.report()
    [failure] = result.failures
    assert failure.check == "settle"
    assert "no replica leads (0 of 1 alive)" in failure.message
    assert "(active faults: leader_loss)" in failure.message


def test_a_crashed_leader_hands_over_to_a_follower(tmp_path: Path) -> None:
    """Restarted at once with its own identity, the crashed leader renewed its own Lease and no follower
    ever led; now the follower takes over and deploys, and the crashed replica returns as a follower."""
    result = run(tmp_path, """\
        name: failover
        description: crash the leader, a follower deploys the next change
        setup: {pods: 1, replicas: 2, config: {file: configs/slots.yaml}, objects: [{file: objects/web.yaml}]}
        steps:
          - fault: {inject: {kind: leader_loss}}
          - apply: {file: objects/api.yaml}
          - settle: 2m
          - expect:
              config: {contains: be_default_api_1}
              events:
                present: [{type: leader.became, fields: {source: controller-1}},
                          {type: deployment.completed, fields: {source: controller-1}},
                          {type: leader.observed, fields: {source: controller-0, is_self: false}}]
                absent: [{type: leader.became, fields: {source: controller-0}}]
        """)
    assert result.status == "passed", result.report()
