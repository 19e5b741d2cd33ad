"""What one bad Ingress among many costs the other teams (prints figures; asserts nothing).

    python bench/isolation.py [--ingresses 3000] [--haproxy /usr/sbin/haproxy]

On the simulator with the Ingress library and N Ingresses: CPU time (this process plus its haproxy
children) from a change to its deployment on 2 pods, and the renders it took,
1. for one good new Ingress,
2. for one good new Ingress arriving in the same window as another team's bad one
   (``haproxy-haptic.org/timeout-server: 999999999d``, which `haproxy -c` rejects): the issue's target
   is less than one extra `haproxy -c` run on top of (1).
"""

from __future__ import annotations

import argparse
import logging
import resource
import shutil
import time
from typing import Any

from haptic.controller.events import ResourceExcluded
from haptic.core import VirtualClock
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _renders(h: Harness) -> int:
    """Renders (each with its haproxy -c unless cached) the coordinators ran, isolation attempts included."""
    total = 0
    for replica in h.replicas:
        iteration = replica.controller.iteration
        if iteration is not None:
            total += iteration.coordinator.renders
    return total


async def _measure(h: Harness, what: str, objects: list[dict[str, Any]], marker: str) -> None:
    renders = _renders(h)
    (cpu, child), wall = _cpu(), time.perf_counter()
    for obj in objects:
        h.apply(obj)
    await h.settle()
    (cpu2, child2) = _cpu()
    deployed = all(marker in (h.stored_file(pod, "maps", "path-prefix.map") or "") for pod in (0, 1))
    excluded = [f"{e.namespace}/{e.name}: {e.reason}" for e in h.events("resource.excluded")
                if isinstance(e, ResourceExcluded)]
    print(f"{what}: {(cpu2 - cpu) * 1000:.0f} ms CPU, of which haproxy -c {(child2 - child) * 1000:.0f} ms; "
          f"{_renders(h) - renders} renders; {time.perf_counter() - wall:.2f} s wall; deployed to both pods: "
          f"{deployed}; excluded: {excluded}")


async def bench(n: int, haproxy: str) -> None:
    h = await Harness(pods=2, haproxy_binary=haproxy, ingress_library=True).start()
    services = max(1, n // 10)
    for s in range(services):
        h.apply(service(f"svc-{s}"))
        h.apply(endpoint_slice(f"svc-{s}", [f"10.{s // 250}.{s % 250}.1"]))
    for i in range(n):
        h.apply(ingress(f"ing-{i:05d}", f"h{i}.example", f"svc-{i % services}"))
    await h.settle()
    print(f"{n} Ingresses deployed")
    await _measure(h, "one good new Ingress", [ingress("good-1", "good1.example", "svc-1")], "good1.example")
    bad = ingress("bad", "bad.example", "svc-2", namespace="default",
                  annotations={"haproxy-haptic.org/timeout-server": "999999999d"})
    await _measure(h, "a good and a bad Ingress in one window", [bad, ingress("good-2", "good2.example", "svc-3")],
                   "good2.example")
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
