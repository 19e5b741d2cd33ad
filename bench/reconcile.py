"""Reconciliation cost on the simulator with many Ingresses (prints figures; asserts nothing).

    python bench/reconcile.py [--sizes 300,3000,10000] [--haproxy /usr/sbin/haproxy] [--slot-template]

Runs the shipped example config (the Ingress template library: Services, EndpointSlices, maps,
10 server slots per backend; ``--slot-template``: the simulator's small slot template) with 2 pods, each
size in a fresh interpreter, and prints per size:

1. startup: the controller started on a cluster holding every object, to its first completed deployment (wall,
   virtual time; target < 2 s at 3,000); applying the objects to the fake API beforehand is printed apart,
2. one EndpointSlice change -> runtime update on 2 pods (a third endpoint fills a server slot of the 10 backends of
   its Service), the controller's CPU until the deployment completed (target < 30 ms at 3,000), the median of three
   such changes (another address each time): the process's CPU less the fake Dataplane APIs' share (CPU inside
   their ASGI apps, as for the new Ingress's "own" below), printed next to it as the total,
3. one new Ingress -> deployed to 2 pods (figures taken when the deployment completed): CPU, of which
   ``haproxy -c`` (the child's CPU from ``RUSAGE_CHILDREN``) and the fake Dataplane APIs (CPU inside their
   ASGI apps and their haproxy's reloads); own = the rest; what follows (the Ingress's status write-back and
   the render it causes) is printed apart,
4. max RSS of the process (controller and simulator together; ``controller_memory.py`` measures the
   controller alone).

Then ``ratio endpoint_change_10000_over_300`` of the controller's figures (target <= 2.0) and
``ratio new_ingress_own_cpu_over_haproxy_c`` at 3,000 (target < 1.0). The fake Kubernetes API's share (watch
delivery, the HAProxyCfg writes) stays in the controller's figures.

``--runs`` rounds (default 3) go over the sizes one after the other: a shared VM's speed drifts by the minute, more
than what separates the sizes, so each figure printed at the end is its median over the rounds, and each ratio the
median of the rounds' own ratios (two sizes measured minutes apart within a round, not hours apart).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

from _meter import children_cpu, cpu, meter_pods

from haptic.core import VirtualClock
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness

#: how many times the EndpointSlice change is measured (the median is printed)
ENDPOINT_SAMPLES = 7


class _Stamped(list[Any]):
    """The harness's trace, noting when each deployment completed (wall time; this process's CPU, its
    children's, the fakes'): the bench's own coroutine may wake only after the work that followed it
    (the Ingress status write-back and the render that write triggers)."""

    def __init__(self, entries: list[Any], meter: Any) -> None:
        super().__init__(entries)
        self.meter = meter
        self.completed: list[float] = []
        self.figures: list[tuple[float, float, float]] = []  # (cpu, children's cpu, fakes' cpu)

    def append(self, entry: Any) -> None:
        super().append(entry)
        if entry.event.type == "deployment.completed":
            self.completed.append(time.perf_counter())
            self.figures.append((cpu(), children_cpu(), self.meter.cpu))


def _fakes_alone(meter: Any) -> None:
    """The figures subtract the fakes' share: wrong if a fake's window held other work."""
    if meter.overlaps:
        raise RuntimeError(f"{meter.overlaps} fake Dataplane requests began inside another's window: the fakes' "
                           "share would hold the controller's work")


async def _until_deployed(h: Harness, count: int, limit: float = 120.0) -> None:
    waited = 0.0
    while len(h.events("deployment.completed")) <= count and waited < limit:
        await asyncio.sleep(0.05)
        waited += 0.05
    if waited >= limit:
        raise RuntimeError("no deployment")


def seed_ingresses(h: Harness, n: int) -> None:
    """``n`` Ingresses over ``n // 10`` Services of two endpoints each."""
    services = max(1, n // 10)
    for s in range(services):
        h.apply(service(f"svc-{s}"))
        h.apply(endpoint_slice(f"svc-{s}", [f"10.{s // 250}.{s % 250}.1", f"10.{s // 250}.{s % 250}.2"]))
    for i in range(n):
        h.apply(ingress(f"ing-{i:05d}", f"h{i}.example", f"svc-{i % services}"))


async def bench(n: int, haproxy: str, library: bool) -> dict[str, Any]:
    # Startup as a restarted controller sees it: the cluster already holds every object.
    h = await Harness(pods=2, replicas=0, haproxy_binary=haproxy, ingress_library=library).start()
    meter = meter_pods(h)
    t0 = time.perf_counter()
    seed_ingresses(h, n)
    seeded = time.perf_counter()
    trace = h.trace = _Stamped(h.trace, meter)
    h.add_replica()
    await _until_deployed(h, 0)
    startup = trace.completed[0] - seeded
    await h.settle()

    # The same change ENDPOINT_SAMPLES times (a third endpoint fills a slot, each time another address; between
    # them, not measured, it goes again): the median (one figure on a shared 2-core machine is mostly noise).
    samples: list[tuple[float, float]] = []  # (process CPU, the fakes' share)
    reloads = runtime = 0  # over the measured changes: a reload in any of them is reported
    for k in range(ENDPOINT_SAMPLES):
        if k:
            done = len(h.events("deployment.completed"))
            h.apply(endpoint_slice("svc-0", ["10.0.0.1", "10.0.0.2"]))
            await _until_deployed(h, done)
            await h.settle()
        done = len(h.events("deployment.completed"))
        before = [h.counters(p) for p in (0, 1)]
        meter.reset()
        start = cpu()
        h.apply(endpoint_slice("svc-0", ["10.0.0.1", "10.0.0.2", f"10.0.0.{3 + k}"]))
        await _until_deployed(h, done)
        samples.append((trace.figures[done][0] - start, trace.figures[done][2]))
        _fakes_alone(meter)
        after = [h.counters(p) for p in (0, 1)]
        reloads += sum(a["reloads"] - b["reloads"] for a, b in zip(after, before, strict=True))
        runtime += sum(a["runtime_server_updates"] - b["runtime_server_updates"]
                       for a, b in zip(after, before, strict=True))
        await h.settle()
    slice_cpu, slice_fake = sorted(samples, key=lambda s: s[0] - s[1])[len(samples) // 2]

    done = len(h.events("deployment.completed"))
    meter.reset()
    start, child = cpu(), children_cpu()
    h.apply(ingress("ing-new", "new.example", "svc-1"))
    await _until_deployed(h, done)
    at_cpu, at_child, at_fake = trace.figures[done]
    _fakes_alone(meter)
    ingress_cpu, ingress_child, ingress_fake = at_cpu - start, at_child - child, at_fake
    await h.settle()
    # What followed the deployment: the new Ingress's status written back, and the render that write causes.
    after_ms = (cpu() - at_cpu - (children_cpu() - at_child) - (meter.cpu - at_fake)) * 1000
    await h.stop()
    return {
        "ingresses": n, "startup_s": startup, "seed_s": seeded - t0,
        "endpoint_change_ms": (slice_cpu - slice_fake) * 1000, "endpoint_change_total_ms": slice_cpu * 1000,
        "endpoint_change_fake_ms": slice_fake * 1000,
        "endpoint_change_samples_ms": [round((c - f) * 1000, 1) for c, f in samples],
        "endpoint_change_reloads": reloads, "endpoint_change_runtime_updates": runtime,
        "new_ingress_ms": ingress_cpu * 1000, "new_ingress_haproxy_c_ms": ingress_child * 1000,
        "new_ingress_fake_ms": ingress_fake * 1000,
        "new_ingress_own_ms": (ingress_cpu - ingress_child - ingress_fake) * 1000,
        "new_ingress_after_ms": after_ms,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _row(n: int, r: dict[str, Any]) -> str:
    return (f"{n:>9} {r['startup_s']:>9.2f} {r['endpoint_change_ms']:>11.0f} {r['endpoint_change_total_ms']:>7.0f} "
            f"{r['new_ingress_ms']:>10.0f} {r['new_ingress_haproxy_c_ms']:>10.0f} {r['new_ingress_fake_ms']:>6.0f} "
            f"{r['new_ingress_own_ms']:>6.0f} {r['rss_mib']:>8.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,3000,10000", help="Ingress counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="rounds over the sizes (default 3; see below)")
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--slot-template", action="store_true", help="the small slot template, not the library")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # one size, JSON out (the child run)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.one is not None:
        print(json.dumps(VirtualClock.run(bench(args.one, args.haproxy, not args.slot_template))))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"config: {'small slot template' if args.slot_template else 'Ingress library'}; 2 pods; "
          f"load average {os.getloadavg()[0]:.2f}; {args.runs} round(s) over the sizes")
    print(f"{'ingresses':>9} {'startup s':>9} {'endpoint ms':>11} {'(total)':>7} {'new ing ms':>10} "
          f"{'haproxy -c':>10} {'fake':>6} {'own':>6} {'RSS MiB':>8}")
    runs: list[dict[int, dict[str, Any]]] = []
    for _ in range(max(1, args.runs)):
        rows: dict[int, dict[str, Any]] = {}
        for n in sizes:
            command = [sys.executable, __file__, "--one", str(n), "--haproxy", args.haproxy]
            out = subprocess.run(command + (["--slot-template"] if args.slot_template else []), capture_output=True,
                                 text=True, check=False)
            if out.returncode != 0:
                print(out.stderr)
                return 1
            r = rows[n] = json.loads(out.stdout.strip().splitlines()[-1])
            print(_row(n, r))
            if r["endpoint_change_reloads"]:
                print(f"  note: the {ENDPOINT_SAMPLES} EndpointSlice changes reloaded "
                      f"{r['endpoint_change_reloads']} pod(s)")
        runs.append(rows)
    # Each figure: its median over the rounds (the machine's speed drifts between them); a ratio: the median of the
    # rounds' own ratios, each of two sizes measured one after the other (what drifts between rounds cancels out).
    def figure(n: int, name: str) -> float:
        return statistics.median([rows[n][name] for rows in runs])

    if len(runs) > 1:
        print("medians over the rounds:")
        for n in sizes:
            print(_row(n, {name: figure(n, name) for name, value in runs[0][n].items() if not isinstance(value, list)}))
    if 3000 in sizes:
        own_ratios = [rows[3000]["new_ingress_own_ms"] / max(rows[3000]["new_ingress_haproxy_c_ms"], 1e-9)
                      for rows in runs]
        print(f"endpoint change at 3000 Ingresses: {figure(3000, 'endpoint_change_ms'):.0f} ms controller CPU "
              f"(target < 30 ms); with the fake Dataplane APIs' {figure(3000, 'endpoint_change_fake_ms'):.0f} ms: "
              f"{figure(3000, 'endpoint_change_total_ms'):.0f} ms")
        print(f"startup at 3000 Ingresses: {figure(3000, 'startup_s'):.2f} s wall from controller start "
              f"(target < 2 s); applying the objects to the fake API before it: {figure(3000, 'seed_s'):.2f} s")
        print(f"new Ingress at 3000: own CPU {figure(3000, 'new_ingress_own_ms'):.0f} ms until deployed to both pods; "
              f"then {figure(3000, 'new_ingress_after_ms'):.0f} ms for its status write-back and the render it causes")
        print(f"ratio new_ingress_own_cpu_over_haproxy_c: {statistics.median(own_ratios):.2f} (target < 1.0; rounds: "
              f"{', '.join(f'{r:.2f}' for r in own_ratios)})")
    if 300 in sizes and 10000 in sizes:
        ratios = [rows[10000]["endpoint_change_ms"] / max(rows[300]["endpoint_change_ms"], 1e-9) for rows in runs]
        print(f"ratio endpoint_change_10000_over_300: {statistics.median(ratios):.2f} (target <= 2.0; rounds: "
              f"{', '.join(f'{r:.2f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
