"""``DryRunCheck``: the admission webhook's ``ProposalCheck`` through the templating and validation APIs.

Render (with the proposed stores, no HAProxy pods, no deployed config: as the original's dry-run
validator), ``haproxy -c`` in strict mode, then the config's embedded validationTests.

The validationTests read only their own fixtures, never the live stores, so their outcome depends on
the configuration alone: they run once per check object (in a worker thread, with an engine and a
validator of their own, so they neither block the event loop nor share render state with it) and
every review awaits that one result. Build a new ``DryRunCheck`` for each configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from haptic.config.models import HAProxyTemplateConfigSpec
from haptic.k8s.store import ResourceStore
from haptic.k8s.store_overlay import OverlayStore
from haptic.names import HAPROXY_PODS
from haptic.templating.context import StorageDirs, StoreLike
from haptic.templating.engine import RenderInputs, TemplateEngine, TemplateSet
from haptic.templating.errors import TemplatingError
from haptic.validation.haproxy_check import ConfigProblem, HAProxyValidator
from haptic.validation.process import AsyncCommandRunner, AsyncSubprocessRunner
from haptic.validation.render_check import render_and_validate
from haptic.validation.render_runner import InlineRenderRunner, RenderRunner
from haptic.validation.testrunner import TestReport, TestResult, ValidationTestRunner
from haptic.webhook.admission import DEFAULT_TIMEOUT, AdmissionValidator, ProposalOutcome

TESTS_TIMEOUT = 60.0
_MAX_PROBLEMS = 8


def test_failures(report: TestReport) -> list[str]:
    """One line per failed validationTest: its name and its first failing assertion or render error."""
    return [_failure(r) for r in report.results if not r.passed]


def _failure(result: TestResult) -> str:
    failed = [a for a in result.assertions if not a.passed]
    if failed:
        first = failed[0]
        what = first.description or f"{first.type} {first.target}"
        detail = first.message.splitlines()[0] if first.message else ""
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        return f"validationTest {result.name}: {what}{': ' + detail if detail else ''}{more}"
    return f"validationTest {result.name}: rendering failed: {result.rendering_error}"


def _problem_text(problem: ConfigProblem) -> str:
    where = f"{problem.file}:{problem.line}: " if problem.file and problem.line else ""
    source = f" (line: {problem.source})" if problem.source else ""
    return f"{where}{problem.message}{source}"


class DryRunCheck:
    """Render + ``haproxy -c`` + validationTests for one configuration."""

    def __init__(
        self,
        spec: HAProxyTemplateConfigSpec,
        engine: TemplateEngine,
        validator: HAProxyValidator,
        *,
        runner: AsyncCommandRunner | None = None,
        tests: ValidationTestRunner | None = None,
        tests_timeout: float = TESTS_TIMEOUT,
        capabilities: Mapping[str, Any] | None = None,
        wall_clock: Callable[[], float] | None = None,
        render_runner: RenderRunner | None = None,
    ) -> None:
        self.spec = spec
        self.render_runner: RenderRunner = render_runner or InlineRenderRunner()
        # The controller's wall clock, for ``now()`` in templates (a render without it fails on ``now()``).
        self.wall_clock = wall_clock
        self.engine = engine
        self.validator = validator
        self.runner: AsyncCommandRunner = runner or AsyncSubprocessRunner()
        self.tests = tests
        self.tests_timeout = tests_timeout
        self.capabilities = dict(capabilities or {})
        self._report: asyncio.Task[list[str]] | None = None

    @classmethod
    def from_spec(
        cls,
        spec: HAProxyTemplateConfigSpec,
        haproxy_binary: str = "haproxy",
        *,
        timeout: float = DEFAULT_TIMEOUT,
        runner: AsyncCommandRunner | None = None,
        capabilities: Mapping[str, Any] | None = None,
        wall_clock: Callable[[], float] | None = None,
        render_runner: RenderRunner | None = None,
    ) -> DryRunCheck:
        """Compiles the templates twice (webhook renders and validationTests never share an engine)."""
        dirs = StorageDirs.from_spec(spec.dataplane)
        templates = TemplateSet.from_spec(spec)
        # Reviews render as before fragments: with them, bench/webhook.py's 3,000-Ingress review overran its 5 s
        # on a loaded machine (not investigated further; the recording cost is on every miss).
        engine = TemplateEngine(templates, render_timeout=timeout, fragments=False)
        validator = HAProxyValidator(haproxy_binary, dirs, strict=True, timeout=timeout)
        tests = None
        if spec.validation_tests:
            tests = ValidationTestRunner(
                spec,
                TemplateEngine(templates),
                HAProxyValidator(haproxy_binary, dirs, strict=True),
                capabilities=capabilities,
            )
        return cls(spec, engine, validator, runner=runner, tests=tests, capabilities=capabilities,
                   wall_clock=wall_clock, render_runner=render_runner)

    def start_tests(self) -> None:
        """Starts the validationTests now (optional: the first review starts them otherwise)."""
        if self._report is None and self.tests is not None:
            self._report = asyncio.create_task(self._run_tests(self.tests), name="webhook-validation-tests")

    async def _run_tests(self, tests: ValidationTestRunner) -> list[str]:
        try:
            # Read on the loop: the tests run in a worker thread, where the loop's clock cannot be read.
            tests.wall_time = None if self.wall_clock is None else self.wall_clock()
            report = await asyncio.wait_for(asyncio.to_thread(tests.run), self.tests_timeout)
        except TimeoutError:
            return [f"validationTests did not finish within {self.tests_timeout:g}s"]
        return test_failures(report)

    async def test_problems(self) -> list[str]:
        self.start_tests()
        if self._report is None:
            return []
        # Shielded: a review that times out must not cancel the run other reviews are waiting for.
        return list(await asyncio.shield(self._report))

    async def __call__(self, stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        inputs = RenderInputs(
            stores={name: store for name, store in stores.items() if name != HAPROXY_PODS},
            haproxy_pods=None,
            extra_context=self.spec.templating_settings.extra_context,
            current_config=None,
            capabilities=self.capabilities,
            dirs=StorageDirs.from_spec(self.spec.dataplane),
            wall_time=None if self.wall_clock is None else self.wall_clock(),
        )
        try:
            checked = await render_and_validate(self.engine, inputs, self.validator, runner=self.runner,
                                                render_runner=self.render_runner)
        except TemplatingError as exc:
            return ProposalOutcome((f"rendering failed: {exc}",))
        problems: list[str] = []
        result, validation = checked.render, checked.validation
        warnings = list(result.warnings)
        if not validation.valid:
            rejected = await self._caused_by_proposal(inputs, stores, validation.errors)
            if rejected:
                errors = [_problem_text(e) for e in rejected] or [validation.summary()]
                problems.append("haproxy -c: " + "; ".join(errors[:_MAX_PROBLEMS]))
            else:
                # Another object broke the config (the controller holds its change back): refusing every
                # later change of every tenant for it would widen one tenant's fault to all.
                warnings.append("haproxy -c rejects the configuration without this change too (another object "
                                "is at fault): " + "; ".join(_problem_text(e) for e in validation.errors[:2]))
        problems.extend(await self.test_problems())
        return ProposalOutcome(tuple(problems), tuple(warnings), result.notices)

    async def _caused_by_proposal(self, inputs: RenderInputs, stores: Mapping[str, StoreLike],
                                  errors: Sequence[ConfigProblem]) -> list[ConfigProblem]:
        """The errors the proposed change brings: all of them, unless the live stores without it fail too
        (then only those the live render does not have)."""
        if not any(isinstance(store, OverlayStore) for store in stores.values()):
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        live = {name: store.base if isinstance(store, OverlayStore) else store for name, store in stores.items()
                if name != HAPROXY_PODS}
        try:
            before = await render_and_validate(self.engine, replace(inputs, stores=live), self.validator,
                                               runner=self.runner, render_runner=self.render_runner)
        except TemplatingError:
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        if before.valid:
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        known = {_without_location(e.message) for e in before.validation.errors}
        return [e for e in errors if _without_location(e.message) not in known]


_LOCATION = re.compile(r"\[[^\[\]]+:\d+\]\s*:?\s*")


def _without_location(message: str) -> str:
    """A problem's message without its file:line (lines move when another object's lines come or go)."""
    return _LOCATION.sub("", message)


def admission_validator(
    spec: HAProxyTemplateConfigSpec,
    stores: Mapping[str, ResourceStore],
    haproxy_binary: str = "haproxy",
    *,
    timeout: float = DEFAULT_TIMEOUT,
    capabilities: Mapping[str, Any] | None = None,
    runner: AsyncCommandRunner | None = None,
    wall_clock: Callable[[], float] | None = None,
    render_runner: RenderRunner | None = None,
) -> AdmissionValidator:
    """The validator for one configuration over its live stores, with the standard dry-run check.

    Built inside a running event loop, the validationTests start at once (in a worker thread), so the
    first review does not wait for them; otherwise the first review starts them. ``runner`` runs
    ``haproxy -c`` (the controller's check runner; the simulator's must not let virtual time advance).
    """
    check = DryRunCheck.from_spec(spec, haproxy_binary, timeout=timeout, capabilities=capabilities, runner=runner,
                                  wall_clock=wall_clock, render_runner=render_runner)
    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop()
        check.start_tests()
    return AdmissionValidator.from_spec(spec, stores, check, timeout=timeout)
