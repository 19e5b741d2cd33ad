"""Benchmark: the runtime sync path against the in-process fake Dataplane API.

For generated configs of 300 / 3,000 / 10,000 backends with 10 servers each, one server address
changes; prints the sync time, the plan time inside it (``SyncResult.plan_duration``) and the
difference (the target is under 50 ms beyond ``plan()``). The desired config is parsed once up
front (``parsed_desired``), as the deployer does for all instances. Prints figures; asserts nothing.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.parser import parse_config
from haptic.dataplane.synchronizer import SyncOptions, VersionCache, sync
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions

SIZES = (300, 3_000, 10_000)
SERVERS = 10
ROUNDS = 5


def generate(backends: int, changed: int = -1) -> str:
    lines = [
        "global",
        "    log stdout format raw local0",
        "",
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        "    timeout client 30s",
        "    timeout server 30s",
        "",
        "frontend fe",
        "    bind :8080",
        "    default_backend be_0",
    ]
    for b in range(backends):
        lines += ["", f"backend be_{b}", "    balance roundrobin"]
        for s in range(SERVERS):
            last = 10 + (changed if b == backends // 2 and s == 3 and changed >= 0 else 0)
            lines.append(f"    server srv_{s} 10.{b // 250}.{b % 250}.{last + s}:8080 check weight 10")
    return "\n".join(lines) + "\n"


async def bench(backends: int) -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.0))
    aux = AuxFiles()
    options = SyncOptions(reload_poll_interval=0.01)
    async with client_for(fake) as client:
        cache = VersionCache()
        t0 = time.perf_counter()
        first = await sync(client, generate(backends), aux, cache=cache, options=options)
        initial = time.perf_counter() - t0
        assert first.ok and first.mode == "raw", first.errors
        totals, plans, beyond = [], [], []
        parse_times, frees = [], []
        # The deployer keeps the previously deployed parsed config (its fallback), so replacing an
        # instance's cache entry frees nothing; dropping the old config is timed apart below.
        previous = cache.parsed
        for round_ in range(1, ROUNDS + 1):
            text = generate(backends, changed=round_ * 20)
            t0 = time.perf_counter()
            desired = parse_config(text)
            parse_times.append(time.perf_counter() - t0)
            gc.collect()  # garbage from building the inputs is not the sync's cost
            t0 = time.perf_counter()
            result = await sync(client, text, aux, cache=cache, options=options, parsed_desired=desired)
            total = time.perf_counter() - t0
            assert result.ok and result.mode == "runtime" and result.runtime_updates == 1, result
            totals.append(total)
            plans.append(result.plan_duration)
            beyond.append(total - result.plan_duration)
            retired, previous = previous, desired
            t0 = time.perf_counter()
            del retired
            frees.append(time.perf_counter() - t0)
        # The same change handed over as text only: sync parses it, sharing unchanged sections
        # with the cached config (parse_config_reusing).
        unparsed = []
        for round_ in range(ROUNDS + 1, 2 * ROUNDS + 1):
            text = generate(backends, changed=round_ * 20)
            gc.collect()
            t0 = time.perf_counter()
            result = await sync(client, text, aux, cache=cache, options=options)
            unparsed.append(time.perf_counter() - t0)
            assert result.ok and result.mode == "runtime", result
    await fake.aclose()
    ms = 1000.0
    print(
        f"{backends:>6} backends x {SERVERS} servers ({backends * SERVERS + backends:>7} lines): "
        f"initial raw push {initial * ms:8.1f} ms | parse desired {statistics.median(parse_times) * ms:7.1f} ms | "
        f"runtime sync {statistics.median(totals) * ms:6.1f} ms, of which plan {statistics.median(plans) * ms:6.1f} ms "
        f"=> beyond plan median {statistics.median(beyond) * ms:5.1f} ms, max {max(beyond) * ms:5.1f} ms | "
        f"freeing the previous parsed config (once per round) {statistics.median(frees) * ms:5.1f} ms | "
        f"sync from text (parse included) {statistics.median(unparsed) * ms:6.1f} ms"
    )


def main() -> int:
    print(f"runtime sync path, in-process fake Dataplane API, median of {ROUNDS} (one server address change)")
    for size in SIZES:
        asyncio.run(bench(size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
