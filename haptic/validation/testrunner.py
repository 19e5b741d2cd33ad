"""Runs a config's embedded ``validationTests``: fixtures → render → assertions.

Templates are compiled once for all tests; each test gets fresh stores built from its fixtures
(merged over ``_global``), its ``currentConfig`` and its ``extraContext`` (merged over the spec's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from haptic.config.models import HAProxyTemplateConfigSpec, ValidationTest
from haptic.templating.context import SharedState, StoreView
from haptic.templating.current_config import CurrentConfig
from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine
from haptic.templating.errors import TemplatingError
from haptic.templating.http_fetch import FixtureHttpSource
from haptic.validation.assertions import RENDERING_ERROR, AssertionInputs, AssertionResult, evaluate
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.setup import GLOBAL_TEST, FixtureError, build_stores, merge_fixtures, render_inputs


@dataclass(frozen=True)
class TestResult:
    name: str
    description: str
    passed: bool
    assertions: tuple[AssertionResult, ...] = ()
    rendering_error: str | None = None
    warnings: tuple[str, ...] = ()
    rendered: RenderResult | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class TestReport:
    results: tuple[TestResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def counts(self) -> tuple[int, int]:
        ok = sum(1 for r in self.results if r.passed)
        return ok, len(self.results) - ok


def _plain(value: Any) -> Any:
    """The render context as plain data for ``jsonpath`` assertions (store views become lists)."""
    if isinstance(value, StoreView):
        return [_plain(v) for v in value.list()]
    if isinstance(value, CurrentConfig):
        return {
            "backends": {
                b.name: {
                    "servers": {
                        s.name: {"address": s.address, "port": s.port, "disabled": s.disabled}
                        for s in b.servers.values()
                    }
                }
                for b in value.backends.values()
            }
        }
    if isinstance(value, SharedState):
        return {k: _plain(v) for k, v in value.snapshot().items()}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return None


class ValidationTestRunner:
    """Runs validation tests of one spec with one compiled engine."""

    def __init__(
        self,
        spec: HAProxyTemplateConfigSpec,
        engine: TemplateEngine,
        validator: HAProxyValidator,
        *,
        capabilities: Mapping[str, Any] | None = None,
        wall_time: float | None = None,
    ) -> None:
        self.spec = spec
        self.engine = engine
        self.validator = validator
        self.capabilities = dict(capabilities or {})
        # What ``now()`` returns in every test of a run (epoch seconds from the caller's clock), fixed so
        # that the ``deterministic`` assertion's re-render sees the same time; None: ``now()`` fails.
        self.wall_time = wall_time

    def test_names(self) -> list[str]:
        names = sorted(self.spec.validation_tests)
        # _global runs first so its shared fixtures are validated on their own before being merged.
        return sorted(names, key=lambda n: (n != GLOBAL_TEST, n))

    def run(self, only: str | None = None) -> TestReport:
        names = self.test_names()
        if only is not None:
            if only not in self.spec.validation_tests:
                raise KeyError(f"no validation test named {only!r} (have: {', '.join(names) or 'none'})")
            names = [only]
        return TestReport(tuple(self.run_test(name) for name in names))

    def inputs_for(self, name: str, test: ValidationTest) -> RenderInputs:
        global_test = self.spec.validation_tests.get(GLOBAL_TEST)
        fixtures = merge_fixtures(
            global_test.fixtures if global_test is not None and name != GLOBAL_TEST else None, test.fixtures
        )
        stores, pods = build_stores(self.spec, fixtures)
        # _global's httpResources apply to every test; a test's own answer for a URL wins.
        http = {r.url: r.content for r in (global_test.http_resources if global_test is not None else [])}
        http.update({r.url: r.content for r in test.http_resources})
        return replace(render_inputs(
            self.spec,
            stores,
            pods,
            extra_context=test.extra_context,
            current_config=test.current_config,
            capabilities=self.capabilities,
            wall_time=self.wall_time,
        ), http=FixtureHttpSource(http))

    def run_test(self, name: str) -> TestResult:
        test = self.spec.validation_tests[name]
        try:
            inputs = self.inputs_for(name, test)
        except (FixtureError, ValueError) as exc:
            return TestResult(name, test.description, False, rendering_error=f"fixtures: {exc}")
        result: RenderResult | None = None
        error: str | None = None
        try:
            result = self.engine.render(inputs)
        except TemplatingError as exc:
            error = str(exc)
        context = result.context if result is not None else self.engine.build_context(inputs)[0]
        data = _plain(context)
        if result is not None and result.statuses:
            data["statuses"] = _statuses_data(result)
        assertion_inputs = AssertionInputs(
            result=result,
            rendering_error=error,
            jsonpath_data=data,
            rerender=lambda: self.engine.render(self.inputs_for(name, test)),
            validator=self.validator,
        )
        outcomes = tuple(evaluate(a, assertion_inputs) for a in test.assertions)
        expects_error = any((a.target or "") == RENDERING_ERROR for a in test.assertions)
        passed = all(o.passed for o in outcomes) and (error is None or expects_error)
        warnings = result.warnings if result is not None else ()
        return TestResult(name, test.description, passed, outcomes, error, warnings, result)


def _statuses_data(result: RenderResult) -> dict[str, Any]:
    """The statuses the render declared, for ``jsonpath`` assertions: ``statuses.<Kind>.<namespace>.<name>``
    (``statuses.<Kind>.<name>`` for cluster-scoped objects)."""
    out: dict[str, Any] = {}
    for item in result.statuses:
        kind = out.setdefault(item.ref.kind, {})
        place = kind.setdefault(item.ref.namespace, {}) if item.ref.namespace else kind
        place[item.ref.name] = _plain(dict(item.status))
    return out


def report_data(report: TestReport) -> dict[str, Any]:
    """The report as plain data (for ``-o json`` / ``-o yaml``)."""
    ok, failed = report.counts
    return {
        "tests": [
            {
                "name": r.name,
                "description": r.description,
                "passed": r.passed,
                "renderingError": r.rendering_error,
                "warnings": list(r.warnings),
                "assertions": [
                    {
                        "type": a.type,
                        "description": a.description,
                        "target": a.target,
                        "passed": a.passed,
                        "message": a.message,
                    }
                    for a in r.assertions
                ],
            }
            for r in report.results
        ],
        "summary": {"total": len(report.results), "passed": ok, "failed": failed},
    }


def report_summary(report: TestReport) -> str:
    """Human-readable ✓/✗ lines and totals."""
    lines = []
    for r in report.results:
        lines.append(f"{'✓' if r.passed else '✗'} {r.name}" + (f" — {r.description}" if r.description else ""))
        if r.rendering_error and not r.passed:
            lines.append(f"    rendering error: {r.rendering_error}")
        for warning in r.warnings:
            lines.append(f"    warning: {warning}")
        for a in r.assertions:
            if not a.passed:
                label = a.description or a.type
                lines.append(f"    ✗ [{a.type} {a.target}] {label}")
                lines.extend(f"        {line}" for line in a.message.splitlines())
    ok, failed = report.counts
    lines.append(f"{len(report.results)} tests, {ok} passed, {failed} failed")
    return "\n".join(lines)
