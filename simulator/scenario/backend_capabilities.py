"""What each backend can run, checked when a scenario loads, before anything starts.

A step a backend cannot perform (a fault its fakes do not have, more waiting than the wall clock
allows) makes the whole cell *unavailable* on that backend, reported with the step's line at once, not
after minutes of setup. A check a backend cannot perform (real traffic on ``sim``) is only *not
applicable*: the rest of the scenario still runs, and the note says so up front.

Must not import the backends themselves (``--check`` works where a backend cannot start).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from .loader import ScenarioCell
from .schema import FAULT_KINDS, AdvanceStep, ExpectStep, FaultStep, LeaderLoss

#: seconds of ``advance`` a ``local`` run spends in total on the wall clock before it scales its clock
#: (``HAPTIC_LOCAL_MAX_ADVANCE``; see ``local_backend.choose_scale``)
LOCAL_MAX_ADVANCE = 120.0
#: the fastest the local backend scales its clock (wall seconds per scenario second)
LOCAL_MIN_SCALE = 0.1


def local_max_advance() -> float:
    return float(os.environ.get("HAPTIC_LOCAL_MAX_ADVANCE", str(LOCAL_MAX_ADVANCE)))


@dataclass(frozen=True)
class Capabilities:
    backend: str
    faults: frozenset[str]
    real_traffic: bool
    events: bool = True
    max_total_advance: float | None = None  # advances longer than 1 s, summed (the runner's polls do not count)
    #: "kind/variant" -> why that variant of a fault cannot run
    unsupported_variants: dict[str, str] = field(default_factory=dict)


def capabilities(backend: str) -> Capabilities | None:
    """The capabilities of a named backend; None for a backend this table does not know (a test double)."""
    if backend == "sim":
        return Capabilities("sim", frozenset(FAULT_KINDS), real_traffic=False)
    if backend == "local":
        # longer scenarios run on a scaled clock; only beyond the fastest scale are they too slow
        return Capabilities("local", frozenset(FAULT_KINDS) - {"clock_skew", "http_fetch_failure"}, real_traffic=True,
                            max_total_advance=local_max_advance() / LOCAL_MIN_SCALE)
    # "cluster" (alias "kind") decides per step against the real installation and says why a step is
    # not applicable there (simulator/scenario/cluster_backend.py): no table entry
    return None


_WHY_NOT = {
    "clock_skew": "a controller subprocess runs on the host's own clock, which cannot be skewed per replica",
    "http_fetch_failure": "only sim has the simulated HTTP server behind http.fetch",
}


@dataclass(frozen=True)
class Limitation:
    """A step (``None``: the whole file) a backend cannot run (``blocking``) or a check it cannot perform."""

    step_index: int | None
    line: int
    message: str
    blocking: bool

    def render(self, source: str) -> str:
        where = "scenario" if self.step_index is None else f"step {self.step_index + 1}"
        kind = "cannot run" if self.blocking else "not applicable"
        return f"{source}:{self.line}: {where}: {kind}: {self.message}"


def limitations(cell: ScenarioCell, caps: Capabilities) -> list[Limitation]:
    """Everything in ``cell`` that ``caps`` rules out, in step order."""
    return list(_limitations(cell, caps))


def _limitations(cell: ScenarioCell, caps: Capabilities) -> Iterator[Limitation]:
    if cell.scenario.setup.http and caps.backend != "sim":
        yield Limitation(None, 1, f"setup.http: only sim has the simulated HTTP server behind http.fetch, "
                                  f"not {caps.backend}", True)
    advanced = 0.0
    reported_advance = False
    for index, step in enumerate(cell.scenario.steps):
        line = cell.step_line(index)
        if isinstance(step, FaultStep) and step.fault.inject is not None:
            fault = step.fault.inject
            if fault.kind not in caps.faults:
                why = _WHY_NOT.get(fault.kind, "its fakes have no such fault")
                yield Limitation(index, line, f"fault {fault.kind} is not available on {caps.backend}: {why}", True)
            elif isinstance(fault, LeaderLoss) and fault.mode == "lease" and "leader_loss/lease" in \
                    caps.unsupported_variants:
                yield Limitation(index, line, caps.unsupported_variants["leader_loss/lease"], True)
        elif isinstance(step, AdvanceStep) and caps.max_total_advance is not None:
            if step.advance > 1.0:
                advanced += step.advance
            if advanced > caps.max_total_advance and not reported_advance:
                reported_advance = True
                yield Limitation(index, line, f"too slow for {caps.backend}: the steps advance more than "
                                              f"{caps.max_total_advance:g}s in total, too long even on its "
                                              "fastest scaled clock (HAPTIC_LOCAL_MAX_ADVANCE)", True)
        elif isinstance(step, ExpectStep):
            if step.expect.traffic is not None and not caps.real_traffic:
                yield Limitation(index, line, f"traffic needs real HAProxy; {caps.backend} has none", False)
            if step.expect.events is not None and not caps.events:
                yield Limitation(index, line, f"{caps.backend} has no domain-event trace", False)


def blocking(found: list[Limitation]) -> list[Limitation]:
    return [limitation for limitation in found if limitation.blocking]
