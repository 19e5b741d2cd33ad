"""The promoted scenarios (those that opt in to ``local``) on the Kind installation, through
``haptic-sim run --backend cluster``: the same files, the same verdicts as on ``sim`` and ``local``.

Reached as a user's machine reaches Kind: the API through the kubeconfig, the controllers and the
Dataplane APIs through ``kubectl port-forward``, traffic through the NodePort kind-config.yaml maps
to 127.0.0.1:30080, endpoints as echo Pods running the controller image. JUnit XML and traces are
written to ``reports/e2e`` (CI uploads them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.scenario.loader import load_cells
from simulator.scenario.pytest_plugin import default_backends
from tests.e2e import kind_cluster

pytestmark = pytest.mark.e2e


def promoted_files() -> list[str]:
    files = []
    for path in sorted((kind_cluster.ROOT / "scenarios").glob("*/*.yaml")):
        if path.parent.name.startswith("_") or path.parent.name in ("objects", "configs", "golden", "files"):
            continue
        if any("local" in default_backends(c) for c in load_cells(path, root=kind_cluster.ROOT)):
            files.append(str(path.relative_to(kind_cluster.ROOT)))
    return files


def test_the_promoted_scenarios_pass_on_kind(deployed: None, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kind_cluster.run("kind", "get", "kubeconfig", "--name", kind_cluster.CLUSTER))
    env = {**os.environ, "HAPTIC_CLUSTER_KUBECONFIG": str(kubeconfig), "HAPTIC_CLUSTER_DATAPLANE": "port-forward",
           "HAPTIC_CLUSTER_TRAFFIC": "127.0.0.1:30080", "HAPTIC_CLUSTER_ECHO": "pods",
           "HAPTIC_CLUSTER_ECHO_IMAGE": kind_cluster.IMAGE}
    report = kind_cluster.ROOT / "reports" / "e2e"
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "run", "--backend", "cluster", "--report",
                           str(report), *promoted_files()], cwd=kind_cluster.ROOT, env=env, capture_output=True,
                          text=True, timeout=3600, check=False)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
