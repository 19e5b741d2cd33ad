"""Reloads under endpoint churn on the simulator (prints figures; asserts nothing).

    python bench/slot_churn.py [--services 50] [--minutes 30] [--seed 7] [--haproxy /usr/sbin/haproxy]

The Ingress template library (10 server slots per backend) with ``--services`` Services, each behind one
Ingress, scaled like a HorizontalPodAutoscaler would for ``--minutes`` virtual minutes: every 15 s (the
HPA's sync period) each Service's replica count follows its own load curve (a daily-like sine with a
random phase and amplitude, plus noise) between 2 and 40 replicas; scale-up is at most doubling per
step, scale-down waits out the HPA's 5-minute stabilization window (the highest recommendation of the
window wins). Prints ``reloads_per_1000_endpoint_changes`` (reloads per pod, per 1,000 endpoints added
or removed; target < 5), the runtime server updates and the servers added at runtime (slots growing
through the Dataplane runtime API's ``add server``, without a reload).
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import shutil
from collections import deque

from haptic.core import VirtualClock
from simulator.cluster_objects import endpoint_slice, ingress, service
from simulator.harness import Harness

HPA_SYNC = 15.0
STABILIZATION = 300.0
MIN_REPLICAS, MAX_REPLICAS = 2, 40


class Autoscaled:
    """One Service's replica count, driven by its load curve through HPA-like rules."""

    def __init__(self, index: int, rng: random.Random) -> None:
        self.name = f"svc-{index}"
        self.index = index
        self.rng = rng
        self.phase = rng.uniform(0, 2 * math.pi)
        self.period = rng.uniform(600.0, 1800.0)
        self.base = rng.uniform(3, 12)
        self.amplitude = rng.uniform(1, 14)
        self.replicas = self._desired(0.0)
        self.window: deque[tuple[float, int]] = deque()

    def _desired(self, t: float) -> int:
        load = self.base + self.amplitude * math.sin(2 * math.pi * t / self.period + self.phase)
        load += self.rng.gauss(0, 1)
        return max(MIN_REPLICAS, min(MAX_REPLICAS, round(load)))

    def step(self, t: float) -> int:
        """The replica count after this HPA sync; returns how many endpoints were added or removed."""
        desired = self._desired(t)
        self.window.append((t, desired))
        while self.window and self.window[0][0] < t - STABILIZATION:
            self.window.popleft()
        if desired > self.replicas:
            new = min(desired, 2 * self.replicas)
        else:
            new = max(d for _, d in self.window)  # scale down only to the window's highest recommendation
            new = min(new, self.replicas)
        changed = abs(new - self.replicas)
        self.replicas = new
        return changed

    def addresses(self) -> list[str]:
        return [f"10.{self.index // 250}.{self.index % 250}.{i + 1}" for i in range(self.replicas)]


async def bench(services: int, minutes: float, seed: int, haproxy: str) -> None:
    rng = random.Random(seed)
    h = await Harness(pods=2, haproxy_binary=haproxy, ingress_library=True).start()
    scaled = [Autoscaled(i, rng) for i in range(services)]
    for s in scaled:
        h.apply(service(s.name))
        h.apply(endpoint_slice(s.name, s.addresses()))
        h.apply(ingress(f"ing-{s.index}", f"h{s.index}.example", s.name))
    await h.settle()
    before = [h.counters(p) for p in (0, 1)]
    changes = 0
    t = 0.0
    while t < minutes * 60:
        t += HPA_SYNC
        for s in scaled:
            moved = s.step(t)
            if moved:
                changes += moved
                h.apply(endpoint_slice(s.name, s.addresses()))
        await h.advance(HPA_SYNC)
    await h.settle()
    after = [h.counters(p) for p in (0, 1)]
    reloads = [a["reloads"] - b["reloads"] for a, b in zip(after, before, strict=True)]
    runtime = sum(a["runtime_server_updates"] - b["runtime_server_updates"] for a, b in zip(after, before, strict=True))
    added = sum(a["runtime_server_adds"] - b["runtime_server_adds"] for a, b in zip(after, before, strict=True))
    per_pod = sum(reloads) / len(reloads)
    print(f"{services} Services, {minutes:g} virtual minutes, HPA sync {HPA_SYNC:g} s: {changes} endpoint changes, "
          f"reloads per pod {reloads}, runtime server updates {runtime}, servers added at runtime {added}")
    print(f"reloads_per_1000_endpoint_changes: {per_pod * 1000 / max(changes, 1):.2f} (target < 5)")
    await h.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    VirtualClock.run(bench(args.services, args.minutes, args.seed, args.haproxy))


if __name__ == "__main__":
    main()
