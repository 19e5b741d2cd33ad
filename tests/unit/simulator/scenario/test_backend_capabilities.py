"""Load-time checks per backend: steps a backend cannot run are reported with their lines before anything starts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simulator.scenario.backend_capabilities import blocking, capabilities, limitations
from simulator.scenario.loader import ScenarioCell, load_cells
from simulator.scenario.runner import run_cell_with
from tests.unit.simulator.scenario.conftest import CONFIG
from tests.unit.simulator.scenario.scripted_backend import ScriptedFactory

BODY = """\
name: caps
description: steps some backends cannot run
setup:
  pods: 1
  replicas: 2
  config: {file: cfg.yaml}
steps:
  - fault: {inject: {kind: clock_skew, replica: 1, offset: -30s}}
  - fault: {inject: {kind: leader_loss, mode: lease}}
  - repeat: {times: 3, steps: [{advance: 50s}]}
  - expect: {traffic: {host: web.example, status: 200}}
"""


@pytest.fixture
def cell(tmp_path: Path) -> ScenarioCell:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "s.yaml").write_text(textwrap.dedent(BODY))
    [found] = load_cells(tmp_path / "s.yaml")
    return found


def test_local_cannot_skew_clocks_nor_wait_beyond_its_fastest_clock(cell: ScenarioCell,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases are handed over on local too; long waits run on a scaled clock, up to 10x faster."""
    monkeypatch.setenv("HAPTIC_LOCAL_MAX_ADVANCE", "12")
    caps = capabilities("local")
    assert caps is not None
    found = limitations(cell, caps)
    assert [(f.step_index, f.line, f.blocking) for f in found] == [(0, 8, True), (4, 10, True)]
    assert "clock_skew is not available on local" in found[0].message
    assert "more than 120s in total, too long even on its fastest scaled clock" in found[1].message
    monkeypatch.delenv("HAPTIC_LOCAL_MAX_ADVANCE", raising=False)
    caps = capabilities("local")
    assert caps is not None
    assert [f.step_index for f in limitations(cell, caps)] == [0], "150 s of advances run scaled"


def test_sim_runs_everything_and_notes_traffic_as_not_applicable(cell: ScenarioCell) -> None:
    caps = capabilities("sim")
    assert caps is not None
    found = limitations(cell, caps)
    assert [(f.step_index, f.blocking) for f in found] == [(5, False)]
    assert blocking(found) == []
    assert found[0].render("s.yaml") == "s.yaml:11: step 6: not applicable: traffic needs real HAProxy; sim has none"


class _CountingFactory(ScriptedFactory):
    name = "local"

    def __init__(self) -> None:
        super().__init__()
        self.created = 0

    def create(self):  # type: ignore[no-untyped-def]
        self.created += 1
        return super().create()


def test_a_run_is_unavailable_before_the_backend_is_created(cell: ScenarioCell) -> None:
    factory = _CountingFactory()
    result = run_cell_with(cell, factory)
    assert factory.created == 0
    assert result.status == "unavailable"
    assert result.message.startswith("step 1 (line 8): fault clock_skew is not available on local")
