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
from haptic.templating.http_fetch import HttpSource
from haptic.templating.notices import object_ref
from haptic.validation.haproxy_check import ConfigProblem, HAProxyValidator
from haptic.validation.isolation import change_order, content_fingerprint, isolate_rejected
from haptic.validation.process import AsyncCommandRunner, AsyncSubprocessRunner
from haptic.validation.render_check import CheckedRender, render_and_validate
from haptic.validation.render_runner import InlineRenderRunner, RenderRunner
from haptic.validation.testrunner import TestReport, TestResult, ValidationTestRunner
from haptic.webhook.admission import DEFAULT_TIMEOUT, AdmissionValidator, ProposalOutcome

ObjectKey = tuple[str, str, str]
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


def problem_text(problem: ConfigProblem) -> str:
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
        http: HttpSource | None = None,
    ) -> None:
        self.spec = spec
        #: what ``http.fetch`` reads in a dry-run: the controller's accepted content (never fetches)
        self.http = http
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
        #: the live objects isolation last found at fault, with their content fingerprints
        self._live_isolation: dict[ObjectKey, str] | None = None

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
        http: HttpSource | None = None,
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
                   wall_clock=wall_clock, render_runner=render_runner, http=http)

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

    def inputs(self, stores: Mapping[str, StoreLike]) -> RenderInputs:
        """What a dry-run render of ``stores`` reads (no HAProxy pods, no deployed config)."""
        return RenderInputs(
            stores={name: store for name, store in stores.items() if name != HAPROXY_PODS},
            haproxy_pods=None,
            extra_context=self.spec.templating_settings.extra_context,
            current_config=None,
            capabilities=self.capabilities,
            dirs=StorageDirs.from_spec(self.spec.dataplane),
            wall_time=None if self.wall_clock is None else self.wall_clock(),
            http=self.http,
        )

    async def __call__(self, stores: Mapping[str, StoreLike]) -> ProposalOutcome:
        inputs = self.inputs(stores)
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
                errors = [problem_text(e) for e in rejected] or [validation.summary()]
                problems.append("haproxy -c: " + "; ".join(errors[:_MAX_PROBLEMS]))
            else:
                # Another object broke the config (the controller holds its change back): refusing every
                # later change of every tenant for it would widen one tenant's fault to all.
                warnings.append("haproxy -c rejects the configuration without this change too (another object "
                                "is at fault): " + "; ".join(problem_text(e) for e in validation.errors[:2]))
        problems.extend(await self.test_problems())
        return ProposalOutcome(tuple(problems), tuple(warnings), result.notices)

    async def _caused_by_proposal(self, inputs: RenderInputs, stores: Mapping[str, StoreLike],
                                  errors: Sequence[ConfigProblem]) -> list[ConfigProblem]:
        """The errors the proposed change brings: all of them, unless the live stores without it fail too.
        Then the proposal is checked as the controller would deploy it: without the live objects whose
        lines haproxy -c rejects (per-object isolation leaves them out), so that a new object with a fault
        of its own is refused even while an older faulty object exists. When isolation finds no such
        objects, the errors the live render does not have."""
        if not any(isinstance(store, OverlayStore) for store in stores.values()):
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        live = {name: store.base if isinstance(store, OverlayStore) else store for name, store in stores.items()
                if name != HAPROXY_PODS}
        live_inputs = replace(inputs, stores=live)
        try:
            before = await render_and_validate(self.engine, live_inputs, self.validator,
                                               runner=self.runner, render_runner=self.render_runner)
            culprits = None if before.valid else await self._live_culprits(live_inputs, before, live)
            if culprits is not None:
                own = {key for store in stores.values() if isinstance(store, OverlayStore)
                       for key in [_proposed_key(store)] if key is not None}
                retry = await render_and_validate(self.engine, replace(inputs, skip=inputs.skip | (culprits - own)),
                                                  self.validator, runner=self.runner, render_runner=self.render_runner)
                return [] if retry.valid else list(retry.validation.errors) or [ConfigProblem("haproxy -c failed")]
        except TemplatingError:
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        if before.valid:
            return list(errors) or [ConfigProblem("haproxy -c failed")]
        known = {without_location(e.message) for e in before.validation.errors}
        return [e for e in errors if without_location(e.message) not in known]

    async def _live_culprits(self, inputs: RenderInputs, failed: CheckedRender,
                             live: Mapping[str, StoreLike]) -> frozenset[ObjectKey] | None:
        """The live objects whose lines haproxy -c rejects (None when leaving objects out does not help).
        The last culprits found are tried first (one render and check while they stay unchanged and leaving
        them out still validates): a full isolation on every review would not fit the review's timeout in a
        large cluster, whose EndpointSlices change all the time."""
        objects = {ref.key: obj for store in live.values() for obj in store.list()
                   if (ref := object_ref(obj)) is not None}
        known = self._live_isolation
        if known and all(key in objects and content_fingerprint(objects[key]) == fp for key, fp in known.items()):
            trial = await render_and_validate(self.engine, replace(inputs, skip=inputs.skip | frozenset(known)),
                                              self.validator, runner=self.runner, render_runner=self.render_runner)
            if trial.valid:
                return frozenset(known)
        isolation = await isolate_rejected(self.engine, inputs, self.validator, runner=self.runner, failed=failed,
                                           candidates=sorted(objects.values(), key=change_order),
                                           render_runner=self.render_runner)
        if isolation is None:
            self._live_isolation = None
            return None
        self._live_isolation = {c.ref.key: content_fingerprint(objects[c.ref.key]) for c in isolation.culprits
                                if c.ref.key in objects}
        return frozenset(c.ref.key for c in isolation.culprits)


def _proposed_key(store: OverlayStore) -> ObjectKey | None:
    ref = object_ref(store.proposed) if store.proposed is not None else None
    return ref.key if ref is not None else None


_LOCATION = re.compile(r"\[[^\[\]]+:\d+\]\s*:?\s*")


def without_location(message: str) -> str:
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
    http: HttpSource | None = None,
) -> AdmissionValidator:
    """The validator for one configuration over its live stores, with the standard dry-run check.

    Built inside a running event loop, the validationTests start at once (in a worker thread), so the
    first review does not wait for them; otherwise the first review starts them. ``runner`` runs
    ``haproxy -c`` (the controller's check runner; the simulator's must not let virtual time advance).
    """
    check = DryRunCheck.from_spec(spec, haproxy_binary, timeout=timeout, capabilities=capabilities, runner=runner,
                                  wall_clock=wall_clock, render_runner=render_runner, http=http)
    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop()
        check.start_tests()
    return AdmissionValidator.from_spec(spec, stores, check, timeout=timeout)
