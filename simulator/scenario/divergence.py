"""The divergence report: one scenario cell run on several backends, verdicts side by side.

The promise of the scenario library is one verdict on every backend; a difference is a bug in the
controller, in a fake more lenient than the real part, or in a backend. For each cell the report
gives every backend's verdict and, where they differ, the first check whose outcome differs (walking
the runs' outcomes in order; a check one backend cannot perform, ``n/a``, differs only from a failure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .runner import CellResult, Outcome

_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "unavailable": "N/A"}


@dataclass(frozen=True)
class Divergence:
    cell: str
    verdicts: Mapping[str, str]  # backend -> PASS/FAIL/ERROR/N/A
    difference: str  # "" when the verdicts agree

    @property
    def diverges(self) -> bool:
        return bool(self.difference)


def _describe(outcome: Outcome | None, backend: str) -> str:
    if outcome is None:
        return f"{backend} did not get there"
    text = f"{backend} {outcome.status}"
    return f"{text} ({outcome.message})" if outcome.message and outcome.status != "pass" else text


def first_difference(a: CellResult, b: CellResult) -> str:
    """Where the runs of one cell on two backends first differ, or ``""`` when their verdicts agree."""
    if a.status == b.status:
        return ""
    if "unavailable" in (a.status, b.status):
        missing = a if a.status == "unavailable" else b
        return f"{missing.backend} cannot run it: {missing.message}"
    for left, right in zip(a.outcomes, b.outcomes, strict=False):
        if (left.step_index, left.check) != (right.step_index, right.check):
            return (f"{left.where()} {left.check} on {a.backend}, {right.where()} {right.check} on {b.backend}: "
                    f"{_describe(left, a.backend)}; {_describe(right, b.backend)}")
        if left.status == right.status or {left.status, right.status} == {"pass", "n/a"}:
            continue  # a check one backend cannot perform differs from nothing it passed
        return f"{left.where()} {left.check}: {_describe(left, a.backend)}; {_describe(right, b.backend)}"
    shorter, longer = (a, b) if len(a.outcomes) < len(b.outcomes) else (b, a)
    extra = longer.outcomes[len(shorter.outcomes)] if len(longer.outcomes) > len(shorter.outcomes) else None
    if extra is not None:
        return f"{extra.where()} {extra.check}: {_describe(extra, longer.backend)}; {shorter.backend} stopped before"
    failed = a if a.status != "passed" else b
    if not failed.failures:
        return f"{failed.backend} {failed.status}"
    return f"{failed.backend}: {failed.failures[0].check}: {failed.failures[0].message}"


def compare(results: Sequence[CellResult], backends: Sequence[str]) -> list[Divergence]:
    """One entry per cell (in the order first seen), comparing each backend with the first one."""
    by_cell: dict[str, dict[str, CellResult]] = {}
    for r in results:
        by_cell.setdefault(r.id, {})[r.backend] = r
    report = []
    for cell, runs in by_cell.items():
        verdicts = {b: _MARK[runs[b].status] if b in runs else "-" for b in backends}
        base = runs.get(backends[0])
        differences = []
        for other in backends[1:]:
            if base is not None and other in runs:
                found = first_difference(base, runs[other])
                if found:
                    differences.append(found if len(backends) == 2 else f"{other}: {found}")
        report.append(Divergence(cell, verdicts, "; ".join(differences)))
    return report


def divergence_table(report: Sequence[Divergence], backends: Sequence[str]) -> str:
    """The report for humans: a verdict column per backend, then the first difference."""
    width = max([len("scenario"), *(len(d.cell) for d in report)])
    head = "  ".join(["scenario".ljust(width), *(b.ljust(5) for b in backends), "first difference"])
    lines = [head, "-" * len(head)]
    for d in report:
        lines.append("  ".join([d.cell.ljust(width), *(d.verdicts[b].ljust(5) for b in backends),
                                d.difference or "-"]))
    diverging = sum(1 for d in report if d.diverges)
    lines.append("")
    lines.append(f"{diverging} of {len(report)} scenario cell(s) diverge between {' and '.join(backends)}"
                 if diverging else f"all {len(report)} scenario cell(s) agree on {' and '.join(backends)}")
    return "\n".join(lines)
