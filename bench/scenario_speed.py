"""Simulator figures: virtual-to-real time ratio, scenario library wall time, trace sizes.

    python bench/scenario_speed.py [--skip-library]

1. the 10-minute drift scenario (scenarios/timing/drift-repair.yaml) on ``sim``: virtual seconds
   per wall second (target >= 500x);
2. the whole scenario library through the pytest plugin with ``-n 2`` (target < 60 s);
3. the JSONL trace each library scenario writes (bytes, records).
Figures are printed, never asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from simulator.scenario.backends import get_factory  # noqa: E402
from simulator.scenario.loader import load_cells  # noqa: E402
from simulator.scenario.runner import run_cell_with  # noqa: E402


def drift_ratio() -> None:
    import logging

    logging.getLogger().setLevel(logging.CRITICAL)
    factory = get_factory("sim")
    reason = factory.unavailable_reason()
    if reason is not None:
        print(f"sim backend unavailable: {reason}")
        return
    [cell] = load_cells(REPO / "scenarios" / "timing" / "drift-repair.yaml")
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        result = run_cell_with(cell, factory)
        wall = time.perf_counter() - started
        runs.append((result.virtual_seconds, wall, result.status))
    best = min(runs, key=lambda r: r[1])
    print(f"drift-repair (10 min of virtual time + a pod restart), best of 3: virtual {best[0]:.1f}s in "
          f"{best[1]:.3f}s wall -> {best[0] / best[1]:.0f}x  (status {best[2]})")


def library_wall_time() -> None:
    env = {**os.environ, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", "scenarios"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    print(f"scenario library on sim, pytest -n 2: {wall:.1f}s wall ({last})")


def trace_sizes() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}"}
        subprocess.run([sys.executable, "-m", "simulator.cli", "run", "scenarios", "-q", "--report", tmp],
                       cwd=REPO, env=env, capture_output=True, text=True, check=False)
        traces = sorted((Path(tmp) / "traces").glob("*.jsonl"))
        sizes = [(p.name.removesuffix(".sim.jsonl"), p.stat().st_size, len(p.read_bytes().splitlines()))
                 for p in traces]
    if not sizes:
        print("no traces written")
        return
    width = max(len(n) for n, _, _ in sizes)
    print(f"{'trace':<{width}}  {'bytes':>9}  {'records':>7}")
    for name, size, lines in sizes:
        print(f"{name:<{width}}  {size:>9,}  {lines:>7,}")
    total = sum(s for _, s, _ in sizes)
    print(f"{len(sizes)} traces, {total:,} bytes, median {sorted(s for _, s, _ in sizes)[len(sizes) // 2]:,} bytes")


if __name__ == "__main__":
    drift_ratio()
    if "--skip-library" not in sys.argv:
        library_wall_time()
    trace_sizes()
