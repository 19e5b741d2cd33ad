"""Exploration: run a scenario many times with fault timings and event orderings drawn from a seed.

``perturb(cell, seed)`` returns the cell one seed explores: the backend seed set to ``seed``, objects
of each ``apply`` (and the setup) in a shuffled order, random pauses before steps (longer before
fault injections and clears), ``advance`` steps and fault durations stretched or shrunk, and extra
harmless faults (watch drops) at random points. Expectations are not checked (timings change what a
scenario may assert); the invariants are. The same seed always gives the same perturbed cell, so a
failure replays exactly.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from .backend import BackendFactory
from .loader import ScenarioCell
from .runner import CellResult, RunOptions, run_cell_with
from .schema import AdvanceStep, ApplyStep, FaultAction, FaultStep, KubeObject, Setup, WatchDrop, step_kind


def parse_seeds(text: str) -> list[int]:
    """``7``, ``1..200``, ``1,5,9`` or combinations (``1..10,42``)."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if ".." in part:
            low, high = part.split("..", 1)
            start, end = int(low), int(high)
            if end < start:
                raise ValueError(f"empty seed range {part!r}")
            seeds.extend(range(start, end + 1))
        elif part:
            seeds.append(int(part))
    if not seeds:
        raise ValueError("no seeds given")
    return seeds


def perturb(cell: ScenarioCell, seed: int) -> ScenarioCell:
    rng = random.Random(f"explore:{cell.id}:{seed}")
    scenario = cell.scenario
    steps: list[BaseModel] = []
    lines: list[int] = []
    for index, step in enumerate(scenario.steps):
        line = cell.step_line(index)
        is_fault = isinstance(step, FaultStep)
        if rng.random() < (0.7 if is_fault else 0.3):
            pause = _grid(rng, 10.0 if is_fault else 4.0)
            steps.append(AdvanceStep(advance=pause))
            lines.append(line)
        if rng.random() < 0.15:
            steps.append(FaultStep(fault=FaultAction(inject=WatchDrop(kind="watch_drop"))))
            lines.append(line)
        if isinstance(step, AdvanceStep) and rng.random() < 0.4:
            # a pause may end early or late: what happens "while" something runs is where races hide
            step = AdvanceStep(advance=_grid(rng, step.advance * 1.5))
        elif isinstance(step, ApplyStep) and len(step.apply) > 1:
            shuffled = list(step.apply)
            rng.shuffle(shuffled)
            step = ApplyStep(apply=shuffled)
        elif isinstance(step, FaultStep) and step.fault.inject is not None and step.fault.inject.duration is not None:
            fault = step.fault.inject
            stretched = round(fault.duration * rng.uniform(0.5, 1.5), 3) if fault.duration else fault.duration
            step = FaultStep(fault=FaultAction(inject=fault.model_copy(update={"duration": stretched})))
        steps.append(step)
        lines.append(line)
    objects = list(scenario.setup.objects)
    inline = [o for o in objects if isinstance(o, KubeObject)]
    if len(inline) == len(objects) and len(objects) > 1:
        rng.shuffle(objects)
    setup: Setup = scenario.setup.model_copy(update={"objects": objects})
    explored = scenario.model_copy(update={"steps": steps, "seed": seed, "setup": setup})
    return dataclasses.replace(cell, scenario=explored, step_lines=tuple(lines))


def _grid(rng: random.Random, limit: float) -> float:
    """A pause on a 250 ms grid: the controller's own timers sit on round values (reload delay,
    debounce, intervals), and races hide where a step lands on the same instant as one of them."""
    return rng.randrange(0, max(1, int(limit / 0.25)) + 1) * 0.25


def describe_steps(cell: ScenarioCell) -> list[str]:
    out = []
    for index, step in enumerate(cell.scenario.steps):
        body = step.model_dump(mode="json", exclude_defaults=True)
        out.append(f"{index + 1:>3}. line {cell.step_line(index)}: {step_kind(step)} {body[step_kind(step)]}")
    return out


@dataclass
class SeedOutcome:
    seed: int
    result: CellResult

    @property
    def ok(self) -> bool:
        return self.result.status == "passed"


def explore_cell(cell: ScenarioCell, factory: BackendFactory, seeds: Sequence[int]) -> list[SeedOutcome]:
    options = RunOptions(check_expectations=False)
    return [SeedOutcome(seed, run_cell_with(perturb(cell, seed), factory, options)) for seed in seeds]
