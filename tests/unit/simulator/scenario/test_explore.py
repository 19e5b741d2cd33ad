"""Exploration: seeds parse, perturbation is a pure function of the seed, invariant failures surface."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from simulator.scenario.explore import describe_steps, explore_cell, parse_seeds, perturb
from simulator.scenario.loader import ScenarioCell, load_cells
from simulator.scenario.schema import AdvanceStep, FaultStep
from tests.unit.simulator.scenario.conftest import CONFIG, service
from tests.unit.simulator.scenario.scripted_backend import ScriptedFactory


def test_parse_seeds() -> None:
    assert parse_seeds("1..3,7") == [1, 2, 3, 7]
    assert parse_seeds("5") == [5]
    with pytest.raises(ValueError):
        parse_seeds("3..1")
    with pytest.raises(ValueError):
        parse_seeds("")


@pytest.fixture
def cell(tmp_path: Path) -> ScenarioCell:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    path = tmp_path / "s.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: ex
        description: exploration target
        setup: {{pods: 2, config: {{file: cfg.yaml}}}}
        steps:
          - apply: [{service("a")}, {service("b")}, {service("c")}]
          - fault: {{inject: {{kind: kube_outage, duration: 20s}}}}
          - apply: {service("d")}
          - advance: 30s
          - expect: {{config: {{contains: never-there}}}}
        """))
    return load_cells(path)[0]


def test_perturbation_is_deterministic_and_varies_with_seed(cell: ScenarioCell) -> None:
    runs = {seed: describe_steps(perturb(cell, seed)) for seed in range(1, 30)}
    assert describe_steps(perturb(cell, 7)) == runs[7]
    assert len({tuple(v) for v in runs.values()}) > 20, "seeds must give different explorations"
    explored = perturb(cell, 3)
    kinds = [type(s) for s in explored.scenario.steps]
    assert kinds.count(AdvanceStep) >= 1 and FaultStep in kinds
    assert explored.scenario.seed == 3
    # every inserted step points at the line of the step it precedes
    assert set(explored.step_lines) <= {cell.step_line(i) for i in range(len(cell.scenario.steps))}


def test_explore_checks_invariants_not_expectations(cell: ScenarioCell) -> None:
    clean = explore_cell(cell, ScriptedFactory(), [1, 2, 3])
    assert all(o.ok for o in clean), [o.result.report() for o in clean if not o.ok]
    buggy = explore_cell(cell, ScriptedFactory(frozenset({"double_deploy"})), [1, 2])
    assert [o.ok for o in buggy] == [False, False]
    assert buggy[0].result.failures[0].check == "invariant single_deployer"
