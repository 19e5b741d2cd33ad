"""SIGINT/SIGTERM to a command that runs the local tier (``haptic-sim run --backend local``, ``explore
--backend local``, ``demo``) stop every process it started: the controller subprocesses and the haproxy
masters run in their own sessions, so nothing else would stop them."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import REPO as _REPO

pytestmark = pytest.mark.haproxy

REPO = _REPO
SIM = [sys.executable, "-m", "simulator.cli"]

SCENARIO = """\
name: long
description: runs long enough to be interrupted
setup:
  pods: 2
  config: {file: configs/slots.yaml}
  objects: [{file: objects/web.yaml}]
steps:
  - advance: 100s
"""


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, start time) of a live process, None when gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else (int(fields[1]), fields[19])


def descendants(root: int) -> dict[int, str]:
    """Every live process below ``root`` (by parent pid), with its start time (pids are reused)."""
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := _stat(int(entry.name))) is not None:
            children.setdefault(info[0], []).append(int(entry.name))
            starts[int(entry.name)] = info[1]
    found: dict[int, str] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found[pid] = starts[pid]
        todo.extend(children.get(pid, []))
    return found


def commands_of(pids: dict[int, str]) -> list[str]:
    names = []
    for pid in pids:
        with contextlib.suppress(OSError):
            names.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return names


def still_alive(pids: dict[int, str]) -> list[int]:
    return [pid for pid, start in pids.items() if (info := _stat(pid)) is not None and info[1] == start]


@pytest.fixture
def scenario_dir(tmp_path: Path, haproxy_bin: str) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "objects").mkdir()
    shutil.copy(REPO / "scenarios" / "configs" / "slots.yaml", tmp_path / "configs" / "slots.yaml")
    shutil.copy(REPO / "scenarios" / "objects" / "web.yaml", tmp_path / "objects" / "web.yaml")
    (tmp_path / "long.yaml").write_text(SCENARIO)
    return tmp_path


def interrupt_when_running(argv: list[str], cwd: Path, signum: int, haproxy_bin: str) -> tuple[int, str, list[str]]:
    """Starts ``argv``, waits until its controller and haproxy processes run, sends ``signum``; returns the
    exit code, the output, and the commands of the processes it had started that are still alive."""
    env = {**os.environ, "PATH": f"{Path(haproxy_bin).parent}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started: dict[int, str] = {}
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and process.poll() is None:
            started.update(descendants(process.pid))
            commands = " ".join(commands_of(started))
            if "haptic.cli run" in commands and commands.count("haproxy") >= 2:
                break
            time.sleep(0.2)
        time.sleep(1.0)  # the controller is up and working, the haproxy workers too
        started.update(descendants(process.pid))
        assert process.poll() is None, "exited before the signal"
        process.send_signal(signum)
        output, _ = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, output, commands_of({pid: started[pid] for pid in still_alive(started)})


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_run_on_local_stops_every_child_on_a_signal(scenario_dir: Path, haproxy_bin: str, signum: int) -> None:
    code, output, left = interrupt_when_running([*SIM, "run", "--backend", "local", "long.yaml"], scenario_dir,
                                                signum, haproxy_bin)
    assert left == [], output
    assert code == 128 + signum, output
    assert "interrupted after 0 of 1 run(s)" in output


def test_explore_on_local_stops_every_child_on_sigterm(scenario_dir: Path, haproxy_bin: str) -> None:
    code, output, left = interrupt_when_running([*SIM, "explore", "long.yaml", "--backend", "local", "--seeds", "1"],
                                                scenario_dir, signal.SIGTERM, haproxy_bin)
    assert left == [], output
    assert code == 128 + signal.SIGTERM, output


def test_demo_stops_every_child_on_sigterm(tmp_path: Path, haproxy_bin: str) -> None:
    code, output, left = interrupt_when_running([*SIM, "demo", "--stay", "--pods", "1"], tmp_path, signal.SIGTERM,
                                                haproxy_bin)
    assert left == [], output
    assert code == 128 + signal.SIGTERM, output
