"""pytest plugin (entry point ``haptic-scenarios``): every ``scenarios/**/*.yaml`` is a test file.

One test item per scenario x matrix cell x backend, named ``<id>[<backend>]``. Only ``sim`` runs by
default; ``--scenario-backend local`` (repeatable) runs the named backends instead, which report
themselves as skipped when not available in this build. Without the option, a scenario that
declares ``backends:`` explicitly and lists ``local`` (``backends: [sim, local]``) also runs on
``local``: this is how a small, fast selection runs on ``local`` in ``make test``. A file that does
not load is one failing item showing every problem with its line. A failing item shows the
runner's report (step, check, diff, trace).

Items are independent (each builds its own simulated cluster), so pytest-xdist distributes them.
``--scenario-report DIR`` writes each cell's JSONL trace there.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .loader import ScenarioCell, ScenarioLoadError, is_scenario_path, load_cells
from .reports import write_trace


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("haptic-scenarios")
    group.addoption("--scenario-backend", action="append", default=None, choices=["sim", "local", "cluster", "kind"],
                    help="backend(s) to run scenario files on (default: sim)")
    group.addoption("--scenario-seed", type=int, default=None, help="override every scenario's seed")
    group.addoption("--scenario-report", type=Path, default=None, help="write JSONL traces of scenarios here")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".yaml" or "scenarios" not in file_path.parts[:-1]:
        return None
    if not is_scenario_path(file_path):
        return None
    collector: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
    return collector


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        chosen: list[str] | None = self.config.getoption("--scenario-backend")
        try:
            cells = load_cells(self.path, root=self.config.rootpath)
        except ScenarioLoadError as exc:
            yield BrokenScenarioItem.from_parent(self, name=self.path.stem, error=exc)
            return
        for cell in cells:
            backends = chosen or default_backends(cell)
            for backend in backends:
                yield ScenarioItem.from_parent(self, name=f"{cell.id}[{backend}]", cell=cell, backend=backend)


def default_backends(cell: ScenarioCell) -> list[str]:
    """``sim``, plus ``local`` when the scenario opts in by listing it in an explicit ``backends:``."""
    scenario = cell.scenario
    if "backends" in scenario.model_fields_set and "local" in scenario.backends:
        return ["sim", "local"]
    return ["sim"]


class ScenarioFailed(Exception):
    def __init__(self, report: str) -> None:
        super().__init__(report)
        self.report = report


class ScenarioItem(pytest.Item):
    def __init__(self, *, cell: ScenarioCell, backend: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cell = cell
        self.backend = backend

    def runtest(self) -> None:
        from .backends import get_factory
        from .runner import RunOptions, run_cell_with

        logging.getLogger("haptic").setLevel(logging.WARNING)
        factory = get_factory(self.backend)
        reason = factory.unavailable_reason()
        if reason is not None:
            if self.backend == "sim" and os.environ.get("CI"):
                pytest.fail(reason)  # as the repository's binary fixtures: in CI a missing haproxy is a failure
            pytest.skip(reason)
        result = run_cell_with(self.cell, factory, RunOptions(seed=self.config.getoption("--scenario-seed")))
        report_dir: Path | None = self.config.getoption("--scenario-report")
        if report_dir is not None:
            write_trace(report_dir, result)
        for note in result.not_applicable:
            self.add_report_section("call", "not applicable", note)
        if result.status != "passed":
            raise ScenarioFailed(result.report())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return excinfo.value.report
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.cell.marks.line_of(("name",)) - 1, f"scenario {self.name}"


class BrokenScenarioItem(pytest.Item):
    def __init__(self, *, error: ScenarioLoadError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return f"scenario file does not load:\n{self.error}"

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario file {self.path.name}"
