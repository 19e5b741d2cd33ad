"""Reports of a scenario run: progress lines, the summary table, JUnit XML and the per-cell JSONL traces."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .runner import CellResult, summarize

_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "unavailable": "N/A"}


def progress_line(index: int, total: int, result: CellResult) -> str:
    width = len(str(total))
    extra = f" ({len(result.not_applicable)} check(s) not applicable)" if result.not_applicable else ""
    return (f"[{index:>{width}}/{total}] {_MARK[result.status]:<5} {result.id} [{result.backend}] "
            f"virtual {result.virtual_seconds:.1f}s, wall {result.wall_seconds:.2f}s{extra}")


def summary_table(results: Sequence[CellResult]) -> str:
    rows = [("scenario", "backend", "result", "steps", "virtual s", "wall s")]
    for r in results:
        rows.append((r.id, r.backend, _MARK[r.status], str(r.steps_run), f"{r.virtual_seconds:.1f}",
                     f"{r.wall_seconds:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i < 3 else cell.rjust(widths[i]) for i, cell in enumerate(row)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    counts = summarize(results)
    lines.append("")
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no scenarios")
    return "\n".join(lines)


def print_failures(results: Sequence[CellResult], out: TextIO) -> None:
    for r in results:
        if r.status in ("failed", "error"):
            out.write("\n" + "=" * 100 + "\n" + r.report() + "\n")
        elif r.status == "unavailable":
            out.write(f"\nN/A {r.id} [{r.backend}]: {r.message}\n")


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=,-]+", "_", text).strip("_") or "scenario"


def trace_path(report_dir: Path, result: CellResult) -> Path:
    return report_dir / "traces" / f"{safe_name(result.id)}.{result.backend}.jsonl"


def write_trace(report_dir: Path, result: CellResult) -> Path:
    path = trace_path(report_dir, result)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(line + "\n" for line in result.trace_lines).encode("utf-8"))
    return path


def junit_xml(results: Sequence[CellResult]) -> str:
    counts = summarize(results)
    suite = ET.Element("testsuite", {
        "name": "haptic-scenarios",
        "tests": str(len(results)),
        "failures": str(counts["failed"]),
        "errors": str(counts["error"]),
        "skipped": str(counts["unavailable"]),
        "time": f"{sum(r.wall_seconds for r in results):.3f}",
    })
    for r in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": f"scenarios.{r.backend}",
            "name": r.id,
            "file": r.source,
            "time": f"{r.wall_seconds:.3f}",
        })
        if r.status == "failed":
            first = r.failures[0]
            ET.SubElement(case, "failure", {"message": f"{first.check}: {first.message}"}).text = r.report()
        elif r.status == "error":
            first = r.failures[0]
            ET.SubElement(case, "error", {"message": f"{first.check}: {first.message}"}).text = r.report()
        elif r.status == "unavailable":
            ET.SubElement(case, "skipped", {"message": r.message})
        notes = [f"not applicable: {n}" for n in r.not_applicable] + [f"generated: {g}" for g in r.generated]
        if notes:
            ET.SubElement(case, "system-out").text = "\n".join(notes)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def write_reports(report_dir: Path, results: Sequence[CellResult]) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    for r in results:
        if r.trace_lines:
            write_trace(report_dir, r)
    (report_dir / "junit.xml").write_text(junit_xml(results), encoding="utf-8")
    (report_dir / "summary.txt").write_text(summary_table(results) + "\n", encoding="utf-8")
