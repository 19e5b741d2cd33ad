"""Reconciliation cost on the simulator with many Ingresses (prints figures; asserts nothing).

    python bench/reconcile.py [--ingresses 3000] [--haproxy /usr/sbin/haproxy] [--slot-template]

Runs the shipped example config (the Ingress template library: Services, EndpointSlices, maps,
10 server slots per backend); ``--slot-template`` runs the simulator's small slot template instead.

Measured as CPU time of this process (controller and simulator share it; the simulator's share is
included, so the figures are upper bounds for the controller):
1. one EndpointSlice change -> runtime update on 2 pods (target < 500 ms),
2. one new Ingress -> deployed to 2 pods, ``haproxy -c`` included (target < 1.5 s; the haproxy child's
   CPU is added from ``RUSAGE_CHILDREN``),
3. resident memory (max RSS of the process, target < 300 MiB).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import shutil
import time

from haptic.core import VirtualClock
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness


def _children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _until_deployed(h: Harness, count: int, limit: float = 120.0) -> None:
    waited = 0.0
    while len(h.events("deployment.completed")) <= count and waited < limit:
        await asyncio.sleep(0.05)
        waited += 0.05
    if waited >= limit:
        raise RuntimeError("no deployment")


async def bench(n: int, haproxy: str, library: bool) -> None:
    h = await Harness(pods=2, haproxy_binary=haproxy, ingress_library=library).start()
    print(f"config: {'Ingress library (examples/ingress)' if library else 'small slot template'}")
    services = max(1, n // 10)
    for s in range(services):
        h.apply(service(f"svc-{s}"))
        h.apply(endpoint_slice(f"svc-{s}", [f"10.{s // 250}.{s % 250}.1", f"10.{s // 250}.{s % 250}.2"]))
    for i in range(n):
        h.apply(ingress(f"ing-{i:05d}", f"h{i}.example", f"svc-{i % services}"))
    t0 = time.perf_counter()
    await h.settle()
    print(f"startup with {n} Ingresses to first deployment: {time.perf_counter() - t0:.2f} s wall")
    before = [h.counters(p) for p in (0, 1)]

    done = len(h.events("deployment.completed"))
    cpu, child = _cpu(), _children_cpu()
    h.apply(endpoint_slice("svc-0", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]))
    await _until_deployed(h, done)
    slice_cpu, slice_child = _cpu() - cpu, _children_cpu() - child
    after = [h.counters(p) for p in (0, 1)]
    reloads = sum(a["reloads"] - b["reloads"] for a, b in zip(after, before, strict=True))
    runtime = sum(a["runtime_server_updates"] - b["runtime_server_updates"] for a, b in zip(after, before, strict=True))
    print(f"EndpointSlice change -> runtime update on 2 pods: {slice_cpu * 1000:.0f} ms CPU, of which haproxy -c "
          f"{slice_child * 1000:.0f} ms (target < 500 ms; reloads {reloads}, runtime server updates {runtime})")

    await h.settle()
    done = len(h.events("deployment.completed"))
    cpu, child = _cpu(), _children_cpu()
    h.apply(ingress("ing-new", "new.example", "svc-1"))
    await _until_deployed(h, done)
    ingress_cpu, ingress_child = _cpu() - cpu, _children_cpu() - child
    print(f"new Ingress -> deployed to 2 pods: {ingress_cpu * 1000:.0f} ms CPU, of which haproxy -c "
          f"{ingress_child * 1000:.0f} ms (target < 1500 ms; the fake Dataplanes' share is included)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max resident memory (controller + simulator in one process): {rss:.0f} MiB (target < 300 MiB)")
    await h.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingresses", type=int, default=3000)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--slot-template", action="store_true", help="the small slot template, not the library")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    VirtualClock.run(bench(args.ingresses, args.haproxy, not args.slot_template))


if __name__ == "__main__":
    main()
