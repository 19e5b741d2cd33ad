"""InvariantMonitor bookkeeping: fault windows, instant faults, restarted replicas, one report per violation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simulator.scenario.backend import TraceRecord
from simulator.scenario.invariants import InvariantMonitor
from simulator.scenario.schema import Invariants


class View:
    """Just what the monitor reads from a backend."""

    def __init__(self) -> None:
        self.t = 0.0
        self.records: list[TraceRecord] = []
        self.stale: list[str] | None = []

    def now(self) -> float:
        return self.t

    def trace(self) -> Sequence[TraceRecord]:
        return self.records

    def out_of_sync(self) -> Sequence[str] | None:
        return self.stale

    def emit(self, source: str, type_: str, **data: Any) -> None:
        self.records.append(TraceRecord(self.t, source, type_, data))


def monitor(**settings: Any) -> InvariantMonitor:
    return InvariantMonitor(Invariants(**settings))


def test_fault_window_defers_convergence_until_it_expires() -> None:
    m, view = monitor(converge_after_faults=30.0, deployed_matches_render=False), View()
    view.stale = ["haproxy-1"]
    m.fault_injected("kube_outage", 0.0, 60.0)
    view.t = 80.0
    assert m.check(view, settled=False) == [], "the outage ended at 60s: the bound runs until 90s"
    assert m.active_faults(80.0) == [] and m.last_change == 60.0
    view.t = 95.0
    [violation] = m.check(view, settled=False)
    assert violation.invariant == "converge_after_faults" and "35.000s after the last change" in violation.message
    assert m.check(view, settled=False) == [], "reported once"


def test_uncleared_fault_suspends_the_bound_until_cleared() -> None:
    m, view = monitor(converge_after_faults=10.0), View()
    view.stale = ["haproxy-0"]
    m.fault_injected("dataplane_5xx", 0.0, None)
    view.t = 500.0
    assert m.check(view, settled=True) == []
    m.faults_cleared(None, 500.0)
    view.t = 505.0
    assert m.check(view, settled=False) == []
    view.t = 511.0
    assert [v.invariant for v in m.check(view, settled=False)] == ["converge_after_faults"]


def test_instant_faults_count_as_changes() -> None:
    m, view = monitor(converge_after_faults=10.0), View()
    view.t = 100.0
    m.fault_injected("pod_restart", 100.0, None)
    assert m.active_faults(100.0) == [] and m.last_change == 100.0


def test_restarted_replica_ends_its_deployment() -> None:
    m, view = monitor(), View()
    view.emit("controller-0", "deployment.started")
    assert m.check(view, settled=False) == []
    m.replica_restarted(0, 1.0)
    view.emit("controller-1", "deployment.started")
    assert m.check(view, settled=False) == []
    view.emit("controller-0", "deployment.started")
    [violation] = m.check(view, settled=False)
    assert violation.message.startswith("controller-0 started deploying while controller-1 was deploying")


def test_a_killed_replica_ends_its_deployment() -> None:
    """On local a crash is SIGKILL: the killed leader never publishes deployment.completed or .cancelled."""
    m, view = monitor(), View()
    view.emit("controller-0", "deployment.started")
    view.emit("local", "replica.killed", replica=0)
    view.emit("controller-1", "deployment.started")
    assert m.check(view, settled=False) == []
    view.emit("controller-2", "deployment.started")
    [violation] = m.check(view, settled=False)
    assert violation.message.startswith("controller-2 started deploying while controller-1 was deploying")


def test_invalid_checksum_validated_later_is_not_a_violation() -> None:
    m, view = monitor(), View()
    view.emit("controller-0", "validation.failed", content_checksum="abc")
    view.emit("controller-0", "validation.completed", content_checksum="abc")
    view.emit("controller-0", "config.applied.to.pod", checksum="abc", pod_name="haproxy-0")
    assert m.check(view, settled=False) == []
    view.emit("controller-0", "validation.failed", content_checksum="def")
    view.emit("controller-0", "deployment.scheduled", content_checksum="def")
    [violation] = m.check(view, settled=False)
    assert violation.invariant == "never_deploy_invalid" and "def" in violation.message
