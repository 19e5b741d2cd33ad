"""Same script, same seed: byte-identical watch traces (timestamps, uids, versions, delivery order)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from haptic.k8s.api import ApiError, ResourceRef, Selectors, WatchOptions
from simulator.kube import FakeKubeAPI, InProcessKubeClient
from simulator.kube.clock import EPOCH

CM = ResourceRef("v1", "configmaps")


async def scripted_run(seed: int) -> str:
    loop = asyncio.get_running_loop()
    start = loop.time()  # each run counts from its own start: the test runs several in one loop

    def now() -> datetime:
        return EPOCH + timedelta(seconds=loop.time() - start)

    api = FakeKubeAPI(now=now, seed=seed, bookmark_interval=7)
    kube = InProcessKubeClient(api, field_manager="script")
    rng = random.Random(seed)
    trace: list[object] = []

    async def watcher(label: str, selector: str | None) -> None:
        options = WatchOptions(resource_version="1", timeout_seconds=60, selectors=Selectors(selector))
        async for event in kube.watch(CM, None, options):
            trace.append((label, loop.time() - start, event.type, event.object))

    tasks = [asyncio.ensure_future(watcher(f"w{i}", sel)) for i, sel in enumerate([None, "app=a", "app"])]
    await asyncio.sleep(0)
    for step in range(40):
        await asyncio.sleep(rng.choice([0, 0.5, 3]))
        name = f"c{rng.randrange(5)}"
        try:
            if rng.random() < 0.4:
                await kube.create(CM, {"metadata": {"generateName": name + "-", "labels": {"app": rng.choice("ab")}}},
                                  "default")
            elif rng.random() < 0.5:
                items = (await kube.list(CM, "default")).items
                if items:
                    target = rng.choice(items)["metadata"]["name"]
                    await kube.patch(CM, target, {"data": {"step": str(step)}}, namespace="default")
            else:
                items = (await kube.list(CM, "default")).items
                if items:
                    await kube.delete(CM, rng.choice(items)["metadata"]["name"], "default")
            if step == 20:
                api.faults.outage(10)
        except ApiError as err:
            trace.append(("error", err.code))
    await asyncio.gather(*tasks)
    return json.dumps(trace, sort_keys=True)


@pytest.mark.looptime
async def test_same_seed_same_trace() -> None:
    first = await scripted_run(3)
    second = await scripted_run(3)
    assert first == second
    entries = json.loads(first)
    assert ["error", 503] in entries
    assert any(e[2] == "BOOKMARK" for e in entries if e[0] != "error")
    assert first != await scripted_run(4)


_RUN = """
import sys, looptime
sys.path.insert(0, {root!r})
from tests.unit.simulator.kube.test_determinism import scripted_run
print(looptime.new_event_loop().run_until_complete(scripted_run(5)))
"""


def test_trace_does_not_depend_on_hash_seed() -> None:
    root = str(Path(__file__).resolve().parents[4])
    outputs = [
        subprocess.run([sys.executable, "-c", _RUN.format(root=root)], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    ]
    assert outputs[0] and outputs[0] == outputs[1]
