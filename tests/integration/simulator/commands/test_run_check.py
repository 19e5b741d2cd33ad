"""``haptic-sim run --check``: load-time limitations per backend, reported without running anything."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.paths import REPO
from tests.unit.simulator.scenario.conftest import CONFIG
from tests.unit.simulator.scenario.test_backend_capabilities import BODY


def test_check_option_reports_and_exits_before_running(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "s.yaml").write_text(textwrap.dedent(BODY))
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "run", "--backend", "local", "--check", "s.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "s.yaml:8: step 1: cannot run: fault clock_skew" in done.stdout
    assert "0 of 1 scenario cell(s) can run on local" in done.stdout
