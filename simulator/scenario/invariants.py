"""Invariants checked after every step, from the trace and the backend's observations.

``InvariantMonitor`` reads the trace incrementally (each record once) and keeps the little state the
checks need: checksums that failed validation, which replica is deploying, the last change and the
faults in force (the runner tells it about steps; faults with a ``duration`` expire on their own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .backend import ScenarioBackend, TraceRecord
from .schema import Invariants

#: faults that are an event rather than a state: they are "cleared" the moment they happen
INSTANT_FAULTS = frozenset({"pod_restart", "watch_drop", "compaction"})


@dataclass(frozen=True)
class Violation:
    invariant: str
    message: str
    t: float


@dataclass
class _Fault:
    kind: str
    until: float | None  # None: until cleared


@dataclass
class InvariantMonitor:
    config: Invariants
    _seen: int = 0
    _failed: dict[str, float] = field(default_factory=dict)
    _validated: set[str] = field(default_factory=set)
    _deploying: dict[str, float] = field(default_factory=dict)
    _faults: list[_Fault] = field(default_factory=list)
    _last_change: float = 0.0
    _reported: set[str] = field(default_factory=set)

    @property
    def last_change(self) -> float:
        return self._last_change

    # -- what the runner tells it

    def changed(self, now: float) -> None:
        """Objects changed or a replica/pod restarted: convergence is due ``bound`` after this."""
        self._last_change = max(self._last_change, now)

    def fault_injected(self, kind: str, now: float, duration: float | None) -> None:
        if kind in INSTANT_FAULTS or (kind == "leader_loss" and duration is None):
            self.changed(now)
            return
        self._faults.append(_Fault(kind, None if duration is None else now + duration))

    def faults_cleared(self, kind: str | None, now: float) -> None:
        kept = []
        for fault in self._faults:
            if kind is None or fault.kind == kind:
                self.changed(now if fault.until is None else min(now, fault.until))
            else:
                kept.append(fault)
        self._faults = kept

    def replica_restarted(self, index: int, now: float) -> None:
        """A restarted replica's unfinished deployment ended with its process (sources are ``<name>-<index>``)."""
        for source in [s for s in self._deploying if s.rsplit("-", 1)[-1] == str(index)]:
            del self._deploying[source]
        self.changed(now)

    def active_faults(self, now: float) -> list[str]:
        for fault in [f for f in self._faults if f.until is not None and f.until <= now]:
            self._faults.remove(fault)
            assert fault.until is not None
            self.changed(fault.until)
        return [f.kind for f in self._faults]

    # -- checks

    def check(self, backend: ScenarioBackend, settled: bool) -> list[Violation]:
        """Every violation since the previous call (each distinct one reported once)."""
        now = backend.now()
        records = backend.trace()
        found = self._scan(records[self._seen:])
        self._seen = len(records)
        active = self.active_faults(now)
        bound = self.config.converge_after_faults
        due = bound is not None and not active and now >= self._last_change + bound
        if (due or (settled and self.config.deployed_matches_render)) and not active:
            mismatch = self._mismatch(backend)
            if mismatch:
                name = "converge_after_faults" if due else "deployed_matches_render"
                if due:
                    message = (f"not converged {now - self._last_change:.3f}s after the last change "
                               f"(bound {bound:g}s): {mismatch}")
                else:
                    message = f"settled, but {mismatch}"
                found.append(Violation(name, message, now))
        fresh = []
        for violation in found:
            key = f"{violation.invariant}:{violation.message}"
            if key not in self._reported:
                self._reported.add(key)
                fresh.append(violation)
        return fresh

    def _scan(self, records: Sequence[TraceRecord]) -> list[Violation]:
        found: list[Violation] = []
        for record in records:
            data = record.data
            if record.type == "validation.failed":
                checksum = str(data.get("content_checksum", ""))
                if checksum:
                    self._failed.setdefault(checksum, record.t)
            elif record.type == "validation.completed":
                self._validated.add(str(data.get("content_checksum", "")))
            elif record.type in ("config.applied.to.pod", "deployment.scheduled") and self.config.never_deploy_invalid:
                checksum = str(data.get("checksum") or data.get("content_checksum") or "")
                if checksum in self._failed and checksum not in self._validated:
                    where = data.get("pod_name", "") or "pods"
                    found.append(Violation("never_deploy_invalid",
                                           f"{record.type} of config {checksum[:12]} to {where}, which failed "
                                           f"validation at t={self._failed[checksum]:.3f}s", record.t))
            elif record.type == "deployment.started" and self.config.single_deployer:
                others = sorted(s for s in self._deploying if s != record.source)
                if others:
                    found.append(Violation("single_deployer",
                                           f"{record.source} started deploying while {', '.join(others)} "
                                           f"was deploying (since t={self._deploying[others[0]]:.3f}s)", record.t))
                self._deploying[record.source] = record.t
            elif record.type in ("deployment.completed", "deployment.cancelled"):
                # Deploying until its writes have stopped: a replica that lost leadership is still
                # deploying until its deployment ends (``leader.lost`` alone proves nothing).
                self._deploying.pop(record.source, None)
            elif record.type == "replica.killed":
                # a crashed process (SIGKILL on local) publishes nothing more: its deployment ended with it
                self._deploying.pop(f"controller-{record.data.get('replica')}", None)
        return found

    @staticmethod
    def _mismatch(backend: ScenarioBackend) -> str:
        stale = backend.out_of_sync()
        if not stale:
            return ""
        return f"{len(stale)} pod(s) do not run the render of the current objects: {', '.join(stale)}"
