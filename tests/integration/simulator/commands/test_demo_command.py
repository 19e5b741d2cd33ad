"""``haptic-sim demo`` end to end, as a user runs it: a subprocess, its output and its exit code."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from haptic import commands as haptic_commands

pytestmark = pytest.mark.haproxy

SLEEPER = shlex.join([sys.executable, "-c", "import time; time.sleep(120)"])


def demo_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "simulator.cli", "demo", *args]


def env(haproxy_bin: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(haproxy_bin).parent}:{os.environ.get('PATH', '')}", "PYTHONUNBUFFERED": "1"}


def pids_in(output: str) -> list[int]:
    """haproxy worker and controller pids as the demo prints them."""
    workers = [int(p) for group in re.findall(r"haproxy workers \[([\d, ]+)\]", output) for p in group.split(",")]
    controllers = [int(p) for p in re.findall(r"controller\s+pid (\d+)", output)]
    return workers + controllers


def alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" not in status.read_text().lower()
    except OSError:
        return False


def controller_available() -> bool:
    return (Path(haptic_commands.__file__).parent / "run.py").exists()


def test_demo_once_runs_the_whole_story(haproxy_bin: str) -> None:
    if not controller_available():
        pytest.skip("the controller's `haptic run` (haptic/commands/run.py) is not merged yet; "
                    "the demo cannot deploy without it")
    done = subprocess.run(demo_argv("--once", "--timeout", "90"), env=env(haproxy_bin), capture_output=True, text=True,
                          timeout=240, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert "demo: OK" in output
    assert re.search(r"\[ok \] haproxy-0: 6 x GET http://web\.demo\.local/ .*echo-1 x\d, echo-2 x\d", output)
    assert re.search(r"\[ok \] haproxy-1: .*echo-1 x\d, echo-2 x\d, echo-3 x\d", output)
    assert "(no reload)" in output and "RELOADED" not in output
    assert "HAProxyCfg haptic/haptic-config-haproxycfg: " in output  # read back from the fake API
    assert re.search(r"haptic-leader\s+haptic-controller-0", output)  # real kubectl against the fake API
    assert "  controller | " in output  # the controller's log is streamed
    assert [pid for pid in pids_in(output) if alive(pid)] == []


def test_demo_fails_when_traffic_does_not_flow(haproxy_bin: str) -> None:
    # A "controller" that never deploys anything: HAProxy keeps its empty config and refuses traffic.
    done = subprocess.run(demo_argv("--once", "--timeout", "2", "--pods", "1", "--controller-command", SLEEPER),
                          env=env(haproxy_bin), capture_output=True, text=True, timeout=120, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "demo: FAILED: traffic did not flow" in output
    assert "[BAD] haproxy-0" in output
    assert "==> stopped" in output
    assert [pid for pid in pids_in(output) if alive(pid)] == []


def test_demo_reports_a_controller_that_exits(haproxy_bin: str) -> None:
    failing = shlex.join([sys.executable, "-c", "import sys; print('boom: no config'); sys.exit(3)"])
    done = subprocess.run(demo_argv("--timeout", "60", "--pods", "1", "--controller-command", failing),
                          env=env(haproxy_bin), capture_output=True, text=True, timeout=120, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "the controller exited with code 3" in output
    assert "controller | boom: no config" in output


def test_ctrl_c_stops_everything(haproxy_bin: str) -> None:
    process = subprocess.Popen(demo_argv("--timeout", "120", "--controller-command", SLEEPER), env=env(haproxy_bin),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + 60
    for line in process.stdout:
        lines.append(line)
        if "waiting for the controller" in line or time.monotonic() > deadline:
            break
    pids = pids_in("".join(lines))
    assert len(pids) == 3 and all(alive(pid) for pid in pids), "".join(lines)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    output = "".join(lines) + rest
    assert process.returncode == 130, output
    assert "demo: interrupted" in output and "==> stopped" in output
    assert [pid for pid in pids if alive(pid)] == []


def test_ctrl_c_in_stay_mode_stops_everything(haproxy_bin: str) -> None:
    # After a deployment the pods' uvicorn servers have run; their signal handling must not eat the Ctrl-C.
    if not controller_available():
        pytest.skip("the controller's `haptic run` is not part of this build")
    process = subprocess.Popen(demo_argv("--stay", "--pods", "1", "--requests", "2"), env=env(haproxy_bin),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "press Ctrl-C" in line or "demo: FAILED" in line:
                break
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    output = "".join(lines)
    pids = pids_in(output)
    assert "press Ctrl-C" in output, output[-4000:]
    assert "[ok ] haproxy-0: 6 x GET" in output  # --requests 2 is raised to two requests per backend
    assert process.returncode == 130, output + rest
    assert pids and [pid for pid in pids if alive(pid)] == []
    leftover = subprocess.run(["pgrep", "-f", re.escape(output.split("KUBECONFIG=")[1].split("/kubeconfig")[0])],
                              capture_output=True, text=True, check=False).stdout.split()
    assert leftover == []  # no process still uses the stack's directory (haproxy masters included)
