"""Reconciliation cost on the simulator with many Ingresses (prints figures; asserts nothing).

    python bench/reconcile.py [--ingresses 3000] [--haproxy /usr/sbin/haproxy]

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
from simulator.cluster_objects import endpoint_slice, ingress
from simulator.harness import Harness


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


async def bench(n: int, haproxy: str) -> None:
    h = await Harness(pods=2, haproxy_binary=haproxy).start()
    services = max(1, n // 10)
    for s in range(services):
        h.apply(endpoint_slice(f"svc-{s}", [f"10.{s // 250}.{s % 250}.1", f"10.{s // 250}.{s % 250}.2"]))
    for i in range(n):
        h.apply(ingress(f"ing-{i:05d}", f"h{i}.example", f"svc-{i % services}"))
    t0 = time.perf_counter()
    await h.settle()
    print(f"startup with {n} Ingresses to first deployment: {time.perf_counter() - t0:.2f} s wall")
    before = [h.counters(p) for p in (0, 1)]

    done = len(h.events("deployment.completed"))
    cpu = _cpu()
    h.apply(endpoint_slice("svc-0", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]))
    await _until_deployed(h, done)
    slice_cpu = _cpu() - cpu
    after = [h.counters(p) for p in (0, 1)]
    reloads = sum(a["reloads"] - b["reloads"] for a, b in zip(after, before, strict=True))
    runtime = sum(a["runtime_server_updates"] - b["runtime_server_updates"] for a, b in zip(after, before, strict=True))
    print(f"EndpointSlice change -> runtime update on 2 pods: {slice_cpu * 1000:.0f} ms CPU "
          f"(target < 500 ms; reloads {reloads}, runtime server updates {runtime})")

    await h.settle()
    done = len(h.events("deployment.completed"))
    cpu = _cpu()
    h.apply(ingress("ing-new", "new.example", "svc-1"))
    await _until_deployed(h, done)
    ingress_cpu = _cpu() - cpu
    print(f"new Ingress -> deployed to 2 pods (haproxy -c included): {ingress_cpu * 1000:.0f} ms CPU "
          f"(target < 1500 ms)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"max resident memory (controller + simulator in one process): {rss:.0f} MiB (target < 300 MiB)")
    await h.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingresses", type=int, default=3000)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    VirtualClock.run(bench(args.ingresses, args.haproxy))


if __name__ == "__main__":
    main()
