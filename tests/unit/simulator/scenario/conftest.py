"""Helpers to write scenario files into ``tmp_path`` and run them on the scripted backend."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from simulator.scenario.loader import load_cells
from simulator.scenario.runner import CellResult, RunOptions, run_cell_with
from tests.unit.simulator.scenario.scripted_backend import ScriptedFactory

CONFIG = """\
apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
metadata: {name: cfg, namespace: default}
spec: {}
"""

Runner = Callable[..., CellResult]


def service(name: str, **annotations: str) -> str:
    notes = ", ".join(f"{k}: '{v}'" for k, v in annotations.items())
    return f"{{apiVersion: v1, kind: Service, metadata: {{name: {name}, annotations: {{{notes}}}}}}}"


@pytest.fixture
def run_scenario(tmp_path: Path) -> Runner:
    def run(body: str, *, bugs: frozenset[str] = frozenset(), seed: int | None = None,
            check_expectations: bool = True) -> CellResult:
        (tmp_path / "cfg.yaml").write_text(CONFIG)
        path = tmp_path / "s.yaml"
        path.write_text(textwrap.dedent(body))
        [cell] = load_cells(path)
        return run_cell_with(cell, ScriptedFactory(bugs), RunOptions(seed=seed, check_expectations=check_expectations))

    return run
