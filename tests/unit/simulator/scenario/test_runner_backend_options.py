"""Optional backend capabilities the runner honours: no event trace (not applicable), async metrics."""

from __future__ import annotations

import textwrap
from pathlib import Path

from simulator.scenario.loader import load_cells
from simulator.scenario.runner import CellResult, run_cell_with
from tests.unit.simulator.scenario.conftest import CONFIG, service
from tests.unit.simulator.scenario.scripted_backend import ScriptedBackend, ScriptedFactory

BODY = f"""\
name: t
description: optional capabilities
setup:
  pods: 1
  config: {{file: cfg.yaml}}
  objects:
    - {service("web")}
steps:
  - expect:
      events: {{since: start, present: [template.rendered]}}
      metric: {{name: haptic_reloads_total, eq: 42}}
"""


class NoEventsAsyncMetrics(ScriptedBackend):
    observes_events = False

    async def metrics_async(self) -> str:
        return "# TYPE haptic_reloads_total counter\nhaptic_reloads_total 42\n"


class Factory(ScriptedFactory):
    def create(self) -> ScriptedBackend:
        return NoEventsAsyncMetrics(self.bugs)


def _run(tmp_path: Path, factory: ScriptedFactory) -> CellResult:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(BODY))
    [cell] = load_cells(path)
    return run_cell_with(cell, factory)


def test_events_without_a_trace_are_not_applicable_and_metrics_are_read_async(tmp_path: Path) -> None:
    result = _run(tmp_path, Factory())
    assert result.status == "passed", result.report()
    assert result.not_applicable == ["step 1 events: this backend has no domain-event trace"]


def test_a_backend_with_neither_option_is_checked_as_before(tmp_path: Path) -> None:
    result = _run(tmp_path, ScriptedFactory())
    assert result.status == "failed"  # the scripted backend's own /metrics has no 42 reloads
    assert [f.check for f in result.failures] == ["metric[haptic_reloads_total]"]
    assert result.not_applicable == []
