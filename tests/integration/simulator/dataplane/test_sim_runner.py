"""The sim backend's process runner: real haproxy work happens while virtual time stands still,
and the ``haptic-sim dataplane`` command serves over HTTP and cleans up its haproxy."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from simulator.dataplane.haproxy_driver import HAProxyDriver
from simulator.dataplane.local_version import local_api_version
from simulator.dataplane.process_runner import BlockingProcessRunner

pytestmark = pytest.mark.haproxy

CONFIG = "global\n    log stdout format raw local0\n\ndefaults\n    mode http\n    timeout client 5s\n"


@pytest.mark.looptime
async def test_blocking_runner_keeps_virtual_time_still(haproxy_bin: str, tmp_path: Path) -> None:
    driver = HAProxyDriver(haproxy_bin, tmp_path, BlockingProcessRunner())
    loop = asyncio.get_running_loop()
    before = loop.time()
    try:
        assert await driver.check(CONFIG) is None
        error = await driver.check(CONFIG + "backend b\n    no-such-keyword here\n")
        assert error is not None and ":8]" in error  # haproxy's own line number for the pushed text
        await driver.start(CONFIG)
        assert len(await driver.worker_pids()) == 1
    finally:
        driver.close()
    # Determinism: the real processes ran without any virtual time passing.
    assert loop.time() == before


def test_cli_serves_over_http_and_stops_its_haproxy(haproxy_bin: str, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simulator.cli",
            "dataplane",
            "--port",
            "0",
            "--haproxy",
            "--haproxy-bin",
            haproxy_bin,
            "--workdir",
            str(tmp_path),
            "--password",
            "pw",
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, line
        url = line.split("listening on ")[1].strip()
        info = httpx.get(f"{url}/info", auth=("admin", "pw"), timeout=5)
        # By default the fake reports the local haproxy's major.minor (what the controller admits).
        assert info.status_code == 200 and info.json()["api"]["version"] == local_api_version(haproxy_bin)
        assert httpx.get(f"{url}/info", auth=("admin", "bad"), timeout=5).status_code == 401
        sockets = process.stdout.readline()
        assert sockets.startswith("haproxy master socket "), sockets
        master = Path(sockets.removeprefix("haproxy master socket ").split(",")[0])
        assert master.exists()
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
        # Shutting down stopped the haproxy it started.
        assert _haproxy_pids(master) == []
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for pid in _haproxy_pids(tmp_path):  # its config files live under this test's tmp_path
            os.kill(pid, signal.SIGKILL)


def _haproxy_pids(path: Path) -> list[int]:
    """PIDs of the haproxy processes whose command line names this test's own ``path``."""
    found = subprocess.run(["pgrep", "-f", str(path)], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split()]
