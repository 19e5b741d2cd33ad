"""Scenario faults on one fake Dataplane API (``FakeDataplane``), shared by the ``sim`` and ``local`` backends.

A fault is active until its ``duration`` passes or a ``clear`` step: while active it affects every
request it applies to, unless ``count`` caps it at the first N (the fake counts them down). Clearing
one kind leaves the pod's other faults in force, and a duration timer only clears the injection that
armed it (a later injection of the same kind on the same pod keeps its own timing).
"""

from __future__ import annotations

from typing import Any

from simulator.dataplane.instance import FakeDataplane

from .schema import Dataplane5xx, Dataplane409Storm, DataplaneSlow, ReloadFailure

#: faults a fake Dataplane API produces by itself (``dataplane_unreachable`` and ``haproxy_down`` need the
#: backend: it owns the transport / the haproxy process)
FAKE_FAULTS = ("dataplane_5xx", "dataplane_slow", "dataplane_409_storm", "reload_failure")
#: the fakes count injected failures down; "every one while active" is a count that never runs out
EVERY = 2**62


def inject(dataplane: FakeDataplane, fault: Any) -> None:
    """Arms ``fault`` (one of ``FAKE_FAULTS``) on ``dataplane``."""
    if isinstance(fault, Dataplane5xx):
        dataplane.inject_errors(EVERY if fault.count is None else fault.count, fault.status, fault.path)
    elif isinstance(fault, DataplaneSlow):
        dataplane.slow_down(fault.delay)
    elif isinstance(fault, Dataplane409Storm):
        dataplane.conflict_storm(EVERY if fault.count is None else fault.count)
    elif isinstance(fault, ReloadFailure):
        dataplane.fail_next_reloads(EVERY if fault.count is None else fault.count)
    else:
        raise ValueError(f"{fault.kind} is not a fault of the fake Dataplane API")


def clear(dataplane: FakeDataplane, kind: str) -> None:
    """Clears one kind of fault on ``dataplane``; the others stay in force."""
    faults = dataplane.faults
    if kind == "dataplane_5xx":
        faults.error_count = 0
    elif kind == "dataplane_slow":
        faults.delay = 0.0
    elif kind == "dataplane_409_storm":
        faults.conflict_count = 0
    elif kind == "reload_failure":
        faults.fail_reloads = 0
    else:
        raise ValueError(f"{kind} is not a fault of the fake Dataplane API")


class Arming:
    """Which injection of a (pod, kind) is current, so that an old duration timer leaves a newer one alone."""

    def __init__(self) -> None:
        self._current: dict[tuple[str, str], int] = {}
        self._next = 0

    def arm(self, pod: str, kind: str) -> int:
        self._next += 1
        self._current[(pod, kind)] = self._next
        return self._next

    def expire(self, pod: str, kind: str, token: int) -> bool:
        """True (and forgotten) when ``token`` is still the current injection of ``(pod, kind)``."""
        if self._current.get((pod, kind)) != token:
            return False
        del self._current[(pod, kind)]
        return True

    def disarm(self, pod: str | None = None, kind: str | None = None) -> None:
        for key in [k for k in self._current if (pod is None or k[0] == pod) and (kind is None or k[1] == kind)]:
            del self._current[key]


def supports_haproxy_down() -> bool:
    """Whether the fake Dataplane API can lose its haproxy (``FakeDataplane.haproxy_down``/``haproxy_up``)."""
    return hasattr(FakeDataplane, "haproxy_down") and hasattr(FakeDataplane, "haproxy_up")


def haproxy_down(dataplane: FakeDataplane) -> None:
    """The pod's haproxy process dies; its Dataplane API keeps answering (runtime calls and reloads fail)."""
    stop = getattr(dataplane, "haproxy_down", None)
    if stop is None:
        raise NotImplementedError("the fake Dataplane API has no haproxy_down()")
    stop()


async def haproxy_up(dataplane: FakeDataplane) -> None:
    """haproxy starts again, as its container would, from the configuration on disk (the current one)."""
    start = getattr(dataplane, "haproxy_up", None)
    if start is None:
        raise NotImplementedError("the fake Dataplane API has no haproxy_up()")
    await start()
