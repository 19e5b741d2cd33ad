"""Bench support (not a bench: ``make bench`` skips ``_*.py``): meters on the simulator's fake Dataplane
APIs, so figures can exclude the fakes' share and count how many pods were written at once."""

from __future__ import annotations

import itertools
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from simulator.dataplane.config_document import ConfigDocument
from simulator.harness import Harness


def cpu() -> float:
    """CPU seconds of this process and its waited-for children (``haproxy -c``)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


@dataclass
class Meter:
    """CPU spent inside the fake Dataplane apps, and per pod the first and last request sequence number
    (a pod's span), from which the most pods being synchronized at once follows."""

    cpu: float = 0.0
    requests: int = 0
    writes: int = 0
    #: requests that began while another was inside a fake (its window then holds other work: ``cpu`` is not
    #: the fakes' alone); the fakes answer without suspending today, so it stays 0
    overlaps: int = 0
    _inside: int = 0
    spans: dict[str, list[int]] = field(default_factory=dict)
    _seq: itertools.count[int] = field(default_factory=itertools.count)

    def reset(self) -> None:
        self.cpu, self.requests, self.writes, self.overlaps = 0.0, 0, 0, 0
        self.spans.clear()

    def most_at_once(self) -> int:
        """The largest number of pods whose [first request, last request] spans overlap."""
        points = sorted([(s, 1) for s, _ in self.spans.values()] + [(e, -1) for _, e in self.spans.values()])
        best = now = 0
        for _, step in points:
            now += step
            best = max(best, now)
        return best


class _Metered(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, meter: Meter, pod: str) -> None:
        self.inner, self.meter, self.pod = inner, meter, pod

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        meter = self.meter
        span = meter.spans.setdefault(self.pod, [next(meter._seq), 0])
        meter.overlaps += meter._inside > 0
        meter._inside += 1
        started = time.process_time()
        try:
            return await self.inner.handle_async_request(request)
        finally:
            meter._inside -= 1
            meter.cpu += time.process_time() - started
            meter.requests += 1
            meter.writes += request.method in ("POST", "PUT", "DELETE")
            span[1] = next(meter._seq)


def _metered_load(load: Callable[[ConfigDocument], None], meter: Meter) -> Callable[[ConfigDocument], None]:
    def timed(document: ConfigDocument) -> None:
        started = time.process_time()
        try:
            load(document)
        finally:
            meter.cpu += time.process_time() - started
    return timed


def meter_pods(h: Harness) -> Meter:
    """Wraps every pod's transport of a started Harness with one shared ``Meter``, and the fake haproxy's
    reload (loading a config into its memory runs on the reload agent's timer, outside any request)."""
    meter = Meter()
    for pod in h.pods.values():
        pod.transport = _Metered(pod.transport, meter, pod.name)  # type: ignore[assignment]
        loaded = pod.dataplane.haproxy
        loaded.load = _metered_load(loaded.load, meter)  # type: ignore[method-assign]
    return meter
