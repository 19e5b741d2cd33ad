from __future__ import annotations

import subprocess
import sys

from haptic import __version__


def test_haptic_version() -> None:
    out = subprocess.run([sys.executable, "-m", "haptic.cli", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"haptic {__version__}"


def test_haptic_sim_help() -> None:
    out = subprocess.run([sys.executable, "-m", "simulator.cli", "--help"], capture_output=True, text=True, check=True)
    assert "usage: haptic-sim" in out.stdout
