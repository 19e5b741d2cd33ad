"""Lease leader election under virtual time: a long, faulty run of three replicas (prints figures).

Run: ``.venv/bin/python bench/leader_failover.py`` (the elector's logs are silenced).

Three electors share the simulator's in-process fake API. A seeded schedule kills (no release),
gracefully stops or partitions the current leader every ~60 s of virtual time and brings replicas
back. Printed: virtual vs. real time, failovers, leaderless time per cause, and whether two replicas
ever led at once (they must not).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from dataclasses import dataclass, field

from haptic.core import VirtualClock
from haptic.k8s.api import KubeAPI
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector, Transition
from simulator.kube import FakeKubeAPI, InProcessKubeClient

VIRTUAL_SECONDS = 2 * 3600.0
SEED = 7


class _Cuttable(InProcessKubeClient):
    def __init__(self, api: FakeKubeAPI) -> None:
        super().__init__(api)
        self.cut = False

    async def get(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.cut:
            raise OSError("partitioned")
        return await super().get(*args, **kwargs)

    async def replace(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.cut:
            raise OSError("partitioned")
        return await super().replace(*args, **kwargs)


@dataclass
class _Replica:
    name: str
    client: _Cuttable
    elector: LeaderElector | None = None
    task: asyncio.Task[None] | None = None


@dataclass
class _Timeline:
    leading: dict[str, float] = field(default_factory=dict)
    intervals: list[tuple[float, float, str]] = field(default_factory=list)
    acquisitions: list[tuple[float, str]] = field(default_factory=list)
    acquired: asyncio.Event = field(default_factory=asyncio.Event)

    def on(self, name: str, t: Transition) -> None:
        if t.kind == "became_leader":
            self.leading[name] = t.at
            self.acquisitions.append((t.at, name))
            self.acquired.set()
        elif t.kind == "lost_leadership" and name in self.leading:
            self.intervals.append((self.leading.pop(name), t.at, name))

    def killed(self, name: str, at: float) -> None:
        if name in self.leading:
            self.intervals.append((self.leading.pop(name), at, name))


async def _main() -> None:
    clock = VirtualClock()
    api = FakeKubeAPI(now=clock.now)
    rng = random.Random(SEED)
    timeline = _Timeline()
    replicas = [_Replica(n, _Cuttable(api)) for n in ("a", "b", "c")]

    def launch(r: _Replica) -> None:
        client: KubeAPI = r.client
        r.elector = LeaderElector(client, ElectionConfig("bench", "default", r.name), clock)
        r.elector.on_transition(lambda t, name=r.name: timeline.on(name, t))  # type: ignore[misc]
        r.task = asyncio.create_task(r.elector.run())

    for r in replicas:
        launch(r)
    causes = {"kill": 0, "release": 0, "partition": 0}
    gaps: dict[str, list[float]] = {k: [] for k in causes}
    loop = asyncio.get_running_loop()
    while loop.time() < VIRTUAL_SECONDS:
        await asyncio.sleep(rng.uniform(40, 80))
        leader = next((r for r in replicas if r.elector is not None and r.elector.is_leader), None)
        if leader is None:
            continue
        cause = rng.choice(sorted(causes))
        causes[cause] += 1
        start = loop.time()
        assert leader.elector is not None and leader.task is not None
        if cause == "kill":
            leader.task.cancel()
            await asyncio.gather(leader.task, return_exceptions=True)
            timeline.killed(leader.name, loop.time())
        elif cause == "release":
            await leader.elector.stop()
        else:
            leader.client.cut = True
        while timeline.acquisitions[-1][1] == leader.name:
            timeline.acquired.clear()
            await timeline.acquired.wait()
        taken = next(at for at, name in reversed(timeline.acquisitions) if name != leader.name)
        gaps[cause].append(taken - start)
        if cause == "partition":
            leader.client.cut = False
        else:
            launch(leader)
    intervals = sorted(timeline.intervals + [(s, loop.time(), n) for n, s in timeline.leading.items()])
    overlaps = sum(1 for x, y in itertools.pairwise(intervals) if x[1] > y[0])
    for r in replicas:
        if r.elector is not None:
            await r.elector.stop()
    print(f"  failovers by cause: {causes}")
    for cause, values in gaps.items():
        if values:
            print(f"  {cause:9s}: time without a new leader min {min(values):5.2f} s  max {max(values):5.2f} s"
                  f"  (virtual; leaseDuration 15 s, retryPeriod 2 s)")
    print(f"  leadership terms: {len(intervals)}; overlapping terms: {overlaps}")


def main() -> None:
    logging.getLogger("haptic.k8s.leaderelection").setLevel(logging.ERROR)
    started = time.perf_counter()
    VirtualClock.run(_main())
    real = time.perf_counter() - started
    print(f"  simulated {VIRTUAL_SECONDS:.0f} virtual s in {real:.2f} real s ({VIRTUAL_SECONDS / real:,.0f}x)")


if __name__ == "__main__":
    main()
