"""The Ingress library's scenarios on ``sim`` with every render done twice, with and without fragments
(``HAPTIC_VERIFY_FRAGMENTS=1``): a difference fails the render (``FragmentMismatch``), so the scenario.
``make test`` runs a selection (isolation, held-back changes, host conflicts, slot growth and compaction,
TLS, default backend); the whole library passes the same way (``HAPTIC_VERIFY_FRAGMENTS=1 haptic-sim run
scenarios``)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import REPO

SELECTION = [
    "scenarios/basics/path-types.yaml",
    "scenarios/basics/tls-certificate-rotation.yaml",
    "scenarios/config/bad-ingress-isolated.yaml",
    "scenarios/config/bad-change-held-back.yaml",
    "scenarios/config/host-conflict-reported.yaml",
    "scenarios/scaling/compact-slots-at-reload.yaml",
    "scenarios/scaling/beyond-slots-reloads.yaml",
]


def test_library_scenarios_render_the_same_with_and_without_fragments() -> None:
    env = {**os.environ, "HAPTIC_VERIFY_FRAGMENTS": "1", "PYTHONPATH": str(REPO),
           "PATH": f"/usr/sbin:{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "run", *SELECTION, "--backend", "sim"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert f"{len(SELECTION)} passed" in done.stdout, done.stdout[-2000:]
