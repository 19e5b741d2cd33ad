"""``haptic validate --verbose``: every assertion, each test's duration and where its render spent the time.

A failed assertion also shows the first lines of the text it looked at, except a certificate's: those
hold private keys, which never reach a terminal or a CI log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from haptic.validation.assertions import RENDERING_ERROR
from haptic.validation.render_profile import RenderProfile, TemplateTiming, format_timings
from haptic.validation.testrunner import TestReport, TestResult, ValidationTestRunner, report_data

PREVIEW_LINES = 20
TOP_TEMPLATES = 20


@dataclass(frozen=True)
class TestTiming:
    seconds: float
    templates: tuple[TemplateTiming, ...]


def run_profiled(runner: ValidationTestRunner, only: str | None = None) -> tuple[TestReport, dict[str, TestTiming]]:
    """Runs the tests as ``runner.run`` does, timing each one and profiling its renders."""
    names = runner.test_names()
    if only is not None:
        if only not in runner.spec.validation_tests:
            raise KeyError(f"no validation test named {only!r} (have: {', '.join(names) or 'none'})")
        names = [only]
    results: list[TestResult] = []
    timings: dict[str, TestTiming] = {}
    for name in names:
        started = time.perf_counter()
        with RenderProfile(runner.engine) as profile:
            results.append(runner.run_test(name))
        timings[name] = TestTiming(time.perf_counter() - started, tuple(profile.top(TOP_TEMPLATES)))
    return TestReport(tuple(results)), timings


def _preview(result: TestResult, target: str) -> list[str]:
    rendered = result.rendered
    if rendered is None or target == RENDERING_ERROR:
        return []
    kind, sep, name = target.partition(":")
    if sep and kind == "cert":
        return [f"(certificate {name} not shown)"]
    groups = {"map": rendered.aux.maps, "file": rendered.aux.files, "crt-list": rendered.aux.crt_lists}
    text = groups[kind].get(name) if sep and kind in groups else rendered.config
    if text is None:
        return []
    lines = text.splitlines()
    shown = [f"| {line}" for line in lines[:PREVIEW_LINES]]
    if len(lines) > PREVIEW_LINES:
        shown.append(f"| … {len(lines) - PREVIEW_LINES} more lines (--dump-rendered prints them all)")
    return [f"{target or 'haproxy.cfg'}:", *shown]


def verbose_summary(report: TestReport, timings: dict[str, TestTiming]) -> str:
    lines: list[str] = []
    for r in report.results:
        timing = timings[r.name]
        head = f"{'✓' if r.passed else '✗'} {r.name}" + (f" — {r.description}" if r.description else "")
        lines.append(f"{head}  ({timing.seconds * 1000:.1f} ms)")
        if r.rendering_error:
            lines.append(f"    rendering error: {r.rendering_error}")
        lines.extend(f"    warning: {warning}" for warning in r.warnings)
        for a in r.assertions:
            lines.append(f"    {'✓' if a.passed else '✗'} [{a.type} {a.target}] {a.description or a.type}")
            if not a.passed:
                lines.extend(f"        {line}" for line in a.message.splitlines())
                lines.extend(f"        {line}" for line in _preview(r, a.target))
        if timing.templates:
            lines.append("    render time per template (inclusive):")
            lines.extend(format_timings(list(timing.templates), indent="    "))
    ok, failed = report.counts
    total = sum(t.seconds for t in timings.values())
    lines.append(f"{len(report.results)} tests, {ok} passed, {failed} failed in {total:.2f} s")
    return "\n".join(lines)


def verbose_data(report: TestReport, timings: dict[str, TestTiming]) -> dict[str, Any]:
    """``report_data`` plus each test's ``durationMs`` and ``templates`` (name, calls, milliseconds)."""
    data = report_data(report)
    for test in data["tests"]:
        timing = timings[test["name"]]
        test["durationMs"] = round(timing.seconds * 1000, 3)
        test["templates"] = [{"name": t.name, "calls": t.calls, "ms": round(t.seconds * 1000, 3)}
                             for t in timing.templates]
    return data
