"""The process-runner port adapters: blocking, asyncio, and blocking-inside-the-loop for virtual time."""

from __future__ import annotations

import asyncio
import sys

import pytest

from haptic.validation.process import AsyncSubprocessRunner, BlockingAsyncRunner, SubprocessRunner

SLEEP = [sys.executable, "-c", "import time, sys; time.sleep(0.3); print('done'); sys.exit(3)"]


def test_subprocess_runner_result_timeout_and_missing_binary(tmp_path: object) -> None:
    result = SubprocessRunner().run(SLEEP, cwd=".", time_limit=10)
    assert (result.returncode, result.stdout.strip()) == (3, "done")
    assert SubprocessRunner().run(SLEEP, cwd=".", time_limit=0.05).stderr.endswith("timed out after 0.05s")
    missing = SubprocessRunner().run(["/nonexistent/haproxy", "-c"], cwd=".", time_limit=1)
    assert missing.returncode == -1 and "cannot run /nonexistent/haproxy" in missing.stderr


async def test_async_runner_result_and_timeout() -> None:
    result = await AsyncSubprocessRunner().run(SLEEP, cwd=".", time_limit=10)
    assert (result.returncode, result.stdout.strip()) == (3, "done")
    late = await AsyncSubprocessRunner().run(SLEEP, cwd=".", time_limit=0.05)
    assert late.returncode == -1 and "timed out" in late.stderr
    missing = await AsyncSubprocessRunner().run(["/nonexistent/haproxy"], cwd=".", time_limit=1)
    assert missing.returncode == -1


@pytest.mark.looptime
async def test_blocking_runner_keeps_virtual_time_still() -> None:
    loop = asyncio.get_running_loop()
    fired: list[float] = []
    timer = loop.call_later(0.1, lambda: fired.append(loop.time()))
    before = loop.time()
    result = await BlockingAsyncRunner().run(SLEEP, cwd=".", time_limit=10)
    assert result.returncode == 3
    # The process ran to completion inside one loop step: no virtual time passed, no timer fired.
    assert loop.time() == before and fired == []
    timer.cancel()
