"""Runs one scenario cell against a backend: steps, expectations, invariants, and the trace.

``run_cell`` is the coroutine (for a backend's loop); ``run_cell_with`` runs it through a
``BackendFactory``. The result holds every failure with its step, the check, a unified diff of
expected vs actual and the trace just before it, plus the JSONL trace lines (virtual timestamps,
no wall-clock data, so the same seed gives the same bytes).

A run stops at the first step that fails (an expectation or an invariant): later steps would only
report consequences.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from .backend import (
    BackendFactory,
    BackendSetup,
    NotApplicable,
    ObjectKey,
    ScenarioBackend,
    TraceRecord,
    TrafficResult,
)
from .backend_capabilities import blocking, capabilities, limitations
from .checks import (
    CheckFailure,
    check_count,
    check_events,
    check_metric,
    check_object,
    check_text,
)
from .invariants import InvariantMonitor, Violation
from .k8s_events import EVENT_API_VERSIONS, KubeEvent, check_k8s_events, check_object_status, collect, fresh
from .loader import ScenarioCell
from .schema import (
    AdvanceStep,
    ApplyStep,
    AuxFileExpectation,
    ConfigExpectation,
    ConvergedExpectation,
    CounterExpectation,
    DeleteStep,
    EventsExpectation,
    Expect,
    ExpectStep,
    FaultStep,
    FileRef,
    GenerateSource,
    KubeEventsExpectation,
    MetricExpectation,
    ObjectExpectation,
    ObjectRef,
    PatchStep,
    RestartStep,
    SettleStep,
    StatusExpectation,
    TrafficExpectation,
    step_kind,
)
from .traffic_checks import check_traffic, secret_fingerprint

Status = Literal["passed", "failed", "error", "unavailable"]
OutcomeStatus = Literal["pass", "fail", "n/a", "error"]
EXCERPT = 15
_POLL = 1.0
SETUP_SETTLE = 300.0


@dataclass(frozen=True)
class Failure:
    """A failed step: where (index, line, kind), what (check, message), and the evidence."""

    step_index: int | None  # None: setup
    step_line: int
    step_kind: str
    check: str
    message: str
    diff: str = ""
    trace: tuple[str, ...] = ()
    category: Literal["expectation", "invariant", "error"] = "expectation"
    origin: str = ""  # the repeat a step was expanded from

    def render(self, source: str) -> str:
        where = "setup" if self.step_index is None else f"step {self.step_index + 1} ({self.step_kind})"
        if self.origin:
            where += f" [{self.origin}]"
        lines = [f"{source}:{self.step_line}: {where}: {self.category} {self.check}: {self.message}"]
        if self.diff:
            lines.append(self.diff.rstrip("\n"))
        if self.trace:
            lines.append(f"trace before the failure (last {len(self.trace)} records):")
            lines.extend(f"  {line}" for line in self.trace)
        return "\n".join(lines)


@dataclass(frozen=True)
class Outcome:
    """How one check ended: step (None: setup), the check (``config``, ``settle``, ``invariants``, ...) and
    its status. The divergence report compares these between backends, in order."""

    step_index: int | None
    step_kind: str
    check: str
    status: OutcomeStatus
    message: str = ""

    def where(self) -> str:
        return "setup" if self.step_index is None else f"step {self.step_index + 1} ({self.step_kind})"


@dataclass
class CellResult:
    id: str
    backend: str
    source: str
    seed: int
    status: Status = "passed"
    failures: list[Failure] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)
    steps_run: int = 0
    virtual_seconds: float = 0.0
    wall_seconds: float = 0.0
    trace_lines: list[str] = field(default_factory=list)
    message: str = ""
    outcomes: list[Outcome] = field(default_factory=list)
    generated: list[str] = field(default_factory=list)  # what the file's generators made

    def report(self) -> str:
        """The human report of this cell: status line, then every failure in full."""
        head = f"{self.status.upper()} {self.id} [{self.backend}, seed {self.seed}]"
        parts = [head + (f": {self.message}" if self.message else "")]
        parts.extend(f.render(self.source) for f in self.failures)
        parts.extend(f"  not applicable: {n}" for n in self.not_applicable)
        parts.extend(f"  generated: {g}" for g in self.generated)
        return "\n".join(parts)


@dataclass(frozen=True)
class RunOptions:
    seed: int | None = None
    check_expectations: bool = True
    #: Stop the run as a failure once it has taken this much (backend) time: a seed that never ends.
    max_virtual_seconds: float | None = None


def trace_line(record: TraceRecord, seq: int) -> str:
    payload = {"seq": seq, "t": round(record.t, 6), "source": record.source, "type": record.type,
               "data": record.data}
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_ENVELOPE = frozenset({"event_id", "correlation_id", "causation_id", "timestamp"})


def format_record(record: TraceRecord) -> str:
    """One trace record for humans: time, source, type and the payload without the event envelope."""
    payload = {k: v for k, v in record.data.items() if k not in _ENVELOPE}
    data = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    if len(data) > 160:
        data = data[:157] + "..."
    return f"{record.t:10.3f}s {record.source:<14} {record.type} {data}"


class _Run:
    def __init__(self, cell: ScenarioCell, backend: ScenarioBackend, result: CellResult, options: RunOptions) -> None:
        self.cell = cell
        self.backend = backend
        self.result = result
        self.options = options
        self.monitor = InvariantMonitor(cell.scenario.invariants)
        self.combined: list[TraceRecord] = []
        self._flushed = 0
        self.counter_marks: dict[str, dict[str, int]] = {}
        self.expect_mark = 0  # trace index (combined) after the previous expect
        self.step_mark = 0  # trace index at the start of the previous step
        self.current_step_mark = 0
        self.started = False  # setup done, steps running
        self.k8s_event_marks: dict[str, int] = {}  # Kubernetes Events (uid -> count) at the previous expect
        self.watches_k8s_events = any(
            isinstance(s, ExpectStep) and s.expect.k8s_events is not None and s.expect.k8s_events.since ==
            "previous_expect" for s in cell.scenario.steps)

    # -- trace

    def _flush(self) -> None:
        records = self.backend.trace()
        self.combined.extend(records[self._flushed:])
        self._flushed = len(records)

    def note(self, type_: str, **data: Any) -> None:
        self._flush()
        self.combined.append(TraceRecord(self.backend.now(), "runner", type_, data))

    def excerpt(self) -> tuple[str, ...]:
        self._flush()
        return tuple(format_record(r) for r in self.combined[-EXCERPT:])

    # -- helpers

    def outcome(self, index: int | None, kind: str, check: str, status: OutcomeStatus, message: str = "") -> None:
        self.result.outcomes.append(Outcome(index, kind, check, status, message))

    def fail(self, index: int | None, kind: str, failure: CheckFailure, category: str = "expectation",
             check: str | None = None) -> None:
        line = self.cell.step_line(index) if index is not None else self.cell.marks.line_of(("setup",))
        status: OutcomeStatus = "error" if category == "error" else "fail"
        self.outcome(index, kind, check or failure.check, status, f"{failure.check}: {failure.message}")
        self.note("check.failed", step=index, check=failure.check, message=failure.message)
        origin = self.cell.step_origin(index) if index is not None else ""
        self.result.failures.append(Failure(index, line, kind, failure.check, failure.message, failure.diff(),
                                            self.excerpt(), category, origin))  # type: ignore[arg-type]

    def pods(self, selector: str | int, check: str) -> list[str] | CheckFailure:
        names = list(self.backend.pod_names())
        if selector == "*":
            return names
        if isinstance(selector, int):
            if 0 <= selector < len(names):
                return [names[selector]]
            return CheckFailure(check, f"no pod #{selector}; there are {len(names)}: {', '.join(names)}")
        if selector in names:
            return [selector]
        return CheckFailure(check, f"no pod {selector!r}; pods: {', '.join(names) or 'none'}")

    def snapshot_counters(self) -> None:
        self.counter_marks = {
            pod: {"reloads": self.backend.reloads(pod), "runtime_updates": self.backend.runtime_updates(pod)}
            for pod in self.backend.pod_names()
        }

    # -- the run

    async def run(self) -> None:
        scenario = self.cell.scenario
        setup = scenario.setup
        seed = self.result.seed
        advances = sum(step.advance for step in scenario.steps if isinstance(step, AdvanceStep))
        await self.backend.start(BackendSetup(pods=setup.pods, replicas=setup.replicas, config=self.cell.config,
                                              objects=self.cell.objects(setup.objects), seed=seed, name=self.cell.id,
                                              advances=advances, endpoint_addresses=endpoint_addresses(self.cell),
                                              http={h.url: [(0.0, h.content), *((t.at, t.content) for t in h.then)]
                                                    for h in setup.http}))
        self.note("scenario.started", id=self.cell.id, seed=seed, pods=setup.pods, replicas=setup.replicas)
        if setup.settle:
            outcome = await self.backend.settle(SETUP_SETTLE)
            if not outcome.converged:
                message = f"the installation did not converge within {SETUP_SETTLE:g}s: {outcome.pending}"
                self.fail(None, "setup", CheckFailure("settle", message), "invariant")
                return
            self.outcome(None, "setup", "settle", "pass")
        if not self._invariants(None, "setup", settled=setup.settle):
            return
        self.snapshot_counters()
        if self.watches_k8s_events:
            self.k8s_event_marks = {e.uid: e.count for e in await self._kube_events()}
        self._flush()
        self.expect_mark = self.step_mark = len(self.combined)
        self.started = True
        for index, step in enumerate(scenario.steps):
            kind = step_kind(step)
            self._flush()
            self.step_mark, self.current_step_mark = self.current_step_mark, len(self.combined)
            origin = self.cell.step_origin(index)
            self.note("step.started", index=index, kind=kind, line=self.cell.step_line(index),
                      **({"origin": origin} if origin else {}))
            before = len(self.result.failures)
            settled = await self._step(index, kind, step)
            self.result.steps_run = index + 1
            if len(self.result.failures) > before:
                return
            if not self._invariants(index, kind, settled=settled):
                return
        self.note("scenario.completed", steps=len(scenario.steps))

    def _invariants(self, index: int | None, kind: str, settled: bool) -> bool:
        violations: list[Violation] = self.monitor.check(self.backend, settled)
        for v in violations:
            failure = CheckFailure(f"invariant {v.invariant}", f"t={v.t:.3f}s: {v.message}")
            self.fail(index, kind, failure, "invariant", check="invariants")
        if not violations:
            self.outcome(index, kind, "invariants", "pass")
        return not violations

    async def _apply_error(self, step: ApplyStep) -> str | None:
        """The message the cluster refused the apply with, or None when it accepted it."""
        try:
            await self.backend.apply(self.cell.objects(step.apply))
        except Exception as exc:  # backend-neutral: each backend raises its API client's error
            return str(exc)
        self.monitor.changed(self.backend.now())
        return None

    def _apply_refused(self, index: int, kind: str, pattern: str, message: str | None) -> None:
        if message is None:
            self.fail(index, kind, CheckFailure("expect_error", f"the apply was accepted; expected it refused "
                                                                f"with an error matching {pattern!r}"))
        elif re.search(pattern, message) is None:
            self.fail(index, kind, CheckFailure("expect_error", f"the apply was refused, but the error does not "
                                                                f"match {pattern!r}: {message}"))
        else:
            self.outcome(index, kind, "expect_error", "pass")
            self.note("apply.refused", step=index, message=message)

    async def _step(self, index: int, kind: str, step: BaseModel) -> bool:
        """Runs one step; returns whether it ended settled (for the settled-state invariants)."""
        backend = self.backend
        if isinstance(step, ApplyStep):
            if step.expect_error is not None:
                self._apply_refused(index, kind, step.expect_error, await self._apply_error(step))
                return False
            await backend.apply(self.cell.objects(step.apply))
            self.monitor.changed(backend.now())
        elif isinstance(step, DeleteStep):
            for target in step.delete:
                if isinstance(target, FileRef | GenerateSource):
                    for obj in self.cell.objects([target]):
                        meta = obj.get("metadata") or {}
                        await backend.delete(ObjectKey(str(obj["kind"]), str(meta["name"]), meta.get("namespace"),
                                                       str(obj.get("apiVersion"))))
                elif isinstance(target, ObjectRef):
                    await backend.delete(ObjectKey(target.kind, target.name, target.namespace, target.apiVersion))
            self.monitor.changed(backend.now())
        elif isinstance(step, PatchStep):
            p = step.patch
            await backend.patch(ObjectKey(p.kind, p.name, p.namespace, p.apiVersion), p.type, p.patch)
            self.monitor.changed(backend.now())
        elif isinstance(step, AdvanceStep):
            await backend.advance(step.advance)
        elif isinstance(step, SettleStep):
            start = backend.now()
            outcome = await backend.settle(step.settle.timeout)
            if not outcome.converged:
                active = ", ".join(self.monitor.active_faults(backend.now())) or "none"
                message = (f"not converged {step.settle.timeout:g}s after t={start:.3f}s: {outcome.pending or '?'} "
                           f"(active faults: {active})")
                self.fail(index, kind, CheckFailure("settle", message), "invariant")
                return False
            self.outcome(index, kind, "settle", "pass")
            return True
        elif isinstance(step, FaultStep):
            action = step.fault
            if action.inject is not None:
                fault = action.inject
                await backend.inject_fault(fault)
                self.monitor.fault_injected(fault.kind, backend.now(), fault.duration)
            else:
                clear = None if action.clear == "all" else action.clear
                await backend.clear_faults(clear)
                self.monitor.faults_cleared(clear, backend.now())
        elif isinstance(step, RestartStep):
            restart = step.restart
            if restart.replica is not None:
                await backend.restart_replica(restart.replica)
                self.monitor.replica_restarted(restart.replica, backend.now())
            else:
                assert restart.pod is not None
                pods = self.pods(restart.pod, "restart.pod")
                if isinstance(pods, CheckFailure):
                    self.fail(index, kind, pods, "error")
                    return False
                await backend.restart_pod(pods[0])
                self.monitor.changed(backend.now())
        elif isinstance(step, ExpectStep):
            if self.options.check_expectations:
                await self._expect(index, kind, step.expect)
            self._flush()
            self.expect_mark = len(self.combined)
            self.snapshot_counters()
            if self.watches_k8s_events:
                self.k8s_event_marks = {e.uid: e.count for e in await self._kube_events()}
        return False

    # -- expectations

    async def _expect(self, index: int, kind: str, expect: Expect) -> None:
        deadline = None if expect.within is None else self.backend.now() + expect.within
        while True:
            results = await self._checks(index, expect)
            failing = any(found for _, found, _ in results)
            if not failing or deadline is None or self.backend.now() >= deadline:
                break
            await self.backend.advance(min(_POLL, deadline - self.backend.now()))
        for name, found, not_applicable in results:
            if not_applicable is not None:
                self.outcome(index, kind, name, "n/a", not_applicable)
            elif not found:
                self.outcome(index, kind, name, "pass")
            for failure in found:
                self.fail(index, kind, failure, check=name)

    async def _checks(self, index: int, expect: Expect) -> list[tuple[str, list[CheckFailure], str | None]]:
        """Each check of ``expect``: its kind, its failures and, when the backend cannot check it, why."""
        results: list[tuple[str, list[CheckFailure], str | None]] = []
        for name, check in expect.checks():
            try:
                results.append((name, await self._check(index, name, check), None))
            except NotApplicable as exc:
                note = f"step {index + 1} {name}: {exc}"
                if note not in self.result.not_applicable:
                    self.result.not_applicable.append(note)
                results.append((name, [], str(exc)))
        return results

    async def _check(self, index: int, name: str, check: BaseModel) -> list[CheckFailure]:
        backend = self.backend
        golden = self.cell.text_files
        if isinstance(check, ConfigExpectation):
            if check.source == "rendered":
                return check_text("config[rendered]", check, backend.rendered_config(), golden)
            pods = self.pods(check.pod, "config")
            if isinstance(pods, CheckFailure):
                return [pods]
            return [f for pod in pods for f in check_text(f"config[{pod}]", check, backend.deployed_config(pod),
                                                          golden)]
        if isinstance(check, AuxFileExpectation):
            pods = self.pods(check.pod, name)
            if isinstance(pods, CheckFailure):
                return [pods]
            failures: list[CheckFailure] = []
            for pod in pods:
                files = backend.aux_files(pod)
                label = f"{name}[{pod}:{check.name}]"
                if check.absent:
                    if check.name in files:
                        failures.append(CheckFailure(label, "expected absent, but it is deployed"))
                    continue
                if check.name not in files:
                    present = ", ".join(sorted(files)) or "none"
                    failures.append(CheckFailure(label, f"not deployed (present: {present})"))
                    continue
                if _checks_content(check) and check.name in _unreadable(backend, pod):
                    raise NotApplicable(f"{check.name} is deployed, but this backend's Dataplane API does not serve "
                                        "its content (a certificate): check what is served with traffic.certificate")
                failures.extend(check_text(label, check, files[check.name], golden))
            return failures
        if isinstance(check, CounterExpectation):
            return self._counter(name, check)
        if isinstance(check, EventsExpectation):
            if not getattr(backend, "observes_events", True):
                raise NotApplicable("this backend has no domain-event trace")
            self._flush()
            start = {"start": 0, "previous_expect": self.expect_mark, "previous_step": self.step_mark}[check.since]
            span = {"start": "since the start", "previous_expect": "since the previous expect",
                    "previous_step": "since the previous step"}[check.since]
            return check_events(check, self.combined[start:], span)
        if isinstance(check, MetricExpectation):
            read_async = getattr(backend, "metrics_async", None)  # optional: a backend reading /metrics over HTTP
            exposition = await read_async() if read_async is not None else backend.metrics()
            return check_metric(check, exposition)
        if isinstance(check, ObjectExpectation):
            return await self._object(check)
        if isinstance(check, StatusExpectation):
            kind = "HAProxyCfg" if name == "haproxycfg" else "HAProxyTemplateConfig"
            if kind == "HAProxyTemplateConfig" and check.name is None:
                meta = self.cell.config.get("metadata") or {}
                check = check.model_copy(update={"name": meta.get("name"), "namespace": meta.get("namespace")})
            objects = await backend.list_objects(kind, check.namespace)
            return check_object(name, check, objects, _yaml)
        if isinstance(check, KubeEventsExpectation):
            events = await self._kube_events()
            if check.since == "previous_expect":
                return check_k8s_events(check, fresh(events, self.k8s_event_marks), "since the previous expect")
            return check_k8s_events(check, events, "in the cluster")
        if isinstance(check, ConvergedExpectation):
            return await self._converged(check)
        if isinstance(check, TrafficExpectation):
            return await self._traffic(check)
        raise TypeError(f"unknown check {name}")

    async def _object(self, check: ObjectExpectation) -> list[CheckFailure]:
        key = ObjectKey(check.kind, check.name or "", check.namespace, check.apiVersion)
        try:
            api_version = key.resolved_api_version()
        except ValueError as exc:
            return [CheckFailure(f"object[{check.kind}]", str(exc))]
        objects = await self.backend.list_objects(check.kind, check.namespace, api_version)
        label = f"object[{check.kind}/{check.namespace + '/' if check.namespace else ''}{check.name or '*'}]"
        failures = check_object(label, check, objects, _yaml)
        chosen = [o for o in objects if check.name is None or (o.get("metadata") or {}).get("name") == check.name]
        if check.exists and len(chosen) == 1:
            failures.extend(check_object_status(label, check, chosen[0], _yaml))
        return failures

    async def _kube_events(self) -> list[KubeEvent]:
        listings = [await self.backend.list_objects("Event", None, version) for version in EVENT_API_VERSIONS]
        return collect(listings)

    def _counter(self, name: str, check: CounterExpectation) -> list[CheckFailure]:
        pods = self.pods(check.pod, name)
        if isinstance(pods, CheckFailure):
            return [pods]
        read = self.backend.reloads if name == "reloads" else self.backend.runtime_updates
        total = sum(read(pod) for pod in pods)
        before = sum(self.counter_marks.get(pod, {}).get(name, 0) for pod in pods)
        label = f"{name}[{check.pod}]"
        failures = []
        if check.total is not None:
            failures.extend(check_count(f"{label}.total", check.total, total))
        if check.delta is not None:
            failures.extend(check_count(f"{label}.delta", check.delta, total - before))
        return failures

    async def _converged(self, check: ConvergedExpectation) -> list[CheckFailure]:
        backend = self.backend
        changed = self.monitor.last_change
        deadline = changed + check.within
        while True:
            out = backend.out_of_sync()
            stale = list(backend.pod_names()) if out is None else list(out)
            if not stale:
                self._flush()
                deployed = [r.t for r in self.combined if r.t >= changed
                            and r.type in ("deployment.completed", "config.applied.to.pod")]
                at = max(deployed) if deployed else changed
                if at <= deadline + 1e-9:
                    return []
                return [CheckFailure("converged", f"converged {at - changed:.3f}s after the last change "
                                     f"(t={changed:.3f}s), bound {check.within:g}s")]
            if backend.now() >= deadline:
                desired = backend.desired_config()
                why = "no valid render of the current objects" if out is None else \
                    f"{len(stale)} pod(s) not on the desired config: {', '.join(stale)}"
                expected = desired or ""
                actual = backend.deployed_config(stale[0]) or "" if stale else ""
                return [CheckFailure("converged", f"not converged {check.within:g}s after the last change "
                                     f"(t={changed:.3f}s): {why}", expected=expected, actual=actual)]
            await backend.advance(min(_POLL, deadline - backend.now()))

    async def _traffic(self, check: TrafficExpectation) -> list[CheckFailure]:
        if check.concurrency == 1:
            replies = [await self.backend.traffic(check) for _ in range(check.repeat)]
        else:
            gate = asyncio.Semaphore(check.concurrency)

            async def one() -> TrafficResult:
                async with gate:
                    return await self.backend.traffic(check)

            replies = list(await asyncio.gather(*(one() for _ in range(check.repeat))))
        fingerprint = None
        if check.certificate is not None and check.certificate.fingerprint_of is not None:
            ref = check.certificate.fingerprint_of
            secrets = await self.backend.list_objects("Secret", ref.namespace)
            found = [o for o in secrets if (o.get("metadata") or {}).get("name") == ref.name]
            fingerprint = secret_fingerprint(found[0]) if found else None
        return check_traffic(check, replies, fingerprint)


def endpoint_addresses(cell: ScenarioCell) -> tuple[str, ...]:
    """Every address the cell's EndpointSlices name (setup objects, applied objects, patch bodies), sorted."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "addresses" and isinstance(item, list):
                    found.update(str(a) for a in item if isinstance(a, str))
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    scenario = cell.scenario
    objects = cell.objects(scenario.setup.objects)
    for step in scenario.steps:
        if isinstance(step, ApplyStep):
            objects.extend(cell.objects(step.apply))
        elif isinstance(step, PatchStep) and step.patch.kind == "EndpointSlice":
            walk(step.patch.patch)
    for obj in objects:
        if obj.get("kind") == "EndpointSlice":
            walk(obj.get("endpoints"))
    return tuple(sorted(found))


def _checks_content(check: AuxFileExpectation) -> bool:
    return bool(check.contains or check.not_contains or check.regex or check.equals_file)


def _unreadable(backend: ScenarioBackend, pod: str) -> set[str]:
    """Files ``backend`` lists but cannot read (optional: a backend over a real Dataplane API)."""
    read = getattr(backend, "unreadable_files", None)
    return set(read(pod)) if read is not None else set()


def _yaml(value: Any) -> str:
    import yaml

    return yaml.safe_dump(value, sort_keys=True, default_flow_style=False)


async def run_cell(cell: ScenarioCell, backend: ScenarioBackend, backend_name: str,
                   options: RunOptions | None = None) -> CellResult:
    """Runs ``cell`` on ``backend`` (already created, not started). Never raises for scenario failures."""
    options = options or RunOptions()
    seed = cell.scenario.seed if options.seed is None else options.seed
    result = CellResult(id=cell.id, backend=backend_name, source=str(cell.source), seed=seed,
                        generated=[f"{where}: {what}" for where, what in cell.generated])
    run = _Run(cell, backend, result, options)
    try:
        try:
            async with asyncio.timeout(options.max_virtual_seconds):
                await run.run()
        except TimeoutError:
            index = run.result.steps_run if run.result.steps_run < len(cell.scenario.steps) else None
            kind = step_kind(cell.scenario.steps[index]) if index is not None else "setup"
            run.fail(index, kind, CheckFailure("limit", f"the run exceeded its time limit of "
                                                         f"{options.max_virtual_seconds:g}s (backend time)"), "error")
    except NotApplicable as exc:
        result.status = "unavailable"
        result.message = str(exc)
    except Exception as exc:  # a crash of the backend or the controller is a result, not a runner crash
        index = run.result.steps_run if run.result.steps_run < len(cell.scenario.steps) else None
        kind = step_kind(cell.scenario.steps[index]) if index is not None else "setup"
        if not run.started:
            index, kind = None, "setup"
        run.fail(index, kind, CheckFailure("run", f"{type(exc).__name__}: {exc}"), "error")
    finally:
        try:
            await backend.stop()
        except Exception as exc:
            result.failures.append(Failure(None, 1, "teardown", "stop", f"{type(exc).__name__}: {exc}",
                                           category="error"))
    run._flush()
    result.virtual_seconds = backend.now()
    result.trace_lines = [trace_line(r, i) for i, r in enumerate(run.combined)]
    if result.status != "unavailable" and result.failures:
        result.status = "error" if any(f.category == "error" for f in result.failures) else "failed"
    return result


def run_cell_with(cell: ScenarioCell, factory: BackendFactory, options: RunOptions | None = None) -> CellResult:
    """Runs one cell in the loop ``factory`` provides; an unavailable backend gives an ``unavailable`` result."""
    reason = factory.unavailable_reason()
    seed = cell.scenario.seed if options is None or options.seed is None else options.seed
    if reason is None:
        reason = cannot_run(cell, factory.name)
    if reason is not None:
        return CellResult(id=cell.id, backend=factory.name, source=str(cell.source), seed=seed,
                          status="unavailable", message=reason)
    started = time.perf_counter()  # wall time for the report only, never in the trace
    backend = factory.create()

    async def main() -> CellResult:
        return await run_cell(cell, backend, factory.name, options)

    result = factory.run(main)
    result.wall_seconds = time.perf_counter() - started
    return result


def cannot_run(cell: ScenarioCell, backend: str) -> str | None:
    """Why ``backend`` cannot run ``cell`` (steps it cannot perform, with their lines), found before it starts."""
    caps = capabilities(backend)
    if caps is None:
        return None
    found = blocking(limitations(cell, caps))
    if not found:
        return None
    return "; ".join(f"step {f.step_index + 1 if f.step_index is not None else '-'} (line {f.line}): {f.message}"
                     for f in found)


def summarize(results: Sequence[CellResult]) -> Mapping[str, int]:
    counts = {"passed": 0, "failed": 0, "error": 0, "unavailable": 0}
    for r in results:
        counts[r.status] += 1
    return counts
