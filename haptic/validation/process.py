"""The command-runner ports ``haproxy -c`` goes through (``CommandRunner``, ``AsyncCommandRunner``).

Not to be confused with ``simulator.dataplane.process_runner``, which starts and stops long-running
haproxy processes for the fake Dataplane API: these run one command to completion.

The live controller awaits a real subprocess (``AsyncSubprocessRunner``); the simulator must not
let virtual time advance while HAProxy checks a config, so it wraps the blocking runner in
``BlockingAsyncRunner``, which runs the process to completion inside the event loop step.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: str
    stderr: str


class CommandRunner(Protocol):
    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult: ...


class AsyncCommandRunner(Protocol):
    async def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult: ...


class SubprocessRunner:
    """Runs a process to completion, blocking the caller."""

    def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        try:
            done = subprocess.run(
                list(argv), cwd=cwd, capture_output=True, text=True, timeout=time_limit, check=False
            )
        except subprocess.TimeoutExpired:
            return ProcessResult(-1, "", f"{argv[0]} timed out after {time_limit:g}s")
        except OSError as exc:
            return ProcessResult(-1, "", f"cannot run {argv[0]}: {exc.strerror or exc}")
        return ProcessResult(done.returncode, done.stdout, done.stderr)


class AsyncSubprocessRunner:
    """Runs a process with asyncio; other tasks keep running while it works."""

    async def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
        except OSError as exc:
            return ProcessResult(-1, "", f"cannot run {argv[0]}: {exc.strerror or exc}")
        try:
            out, err = await asyncio.wait_for(proc.communicate(), time_limit)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return ProcessResult(-1, "", f"{argv[0]} timed out after {time_limit:g}s")
        return ProcessResult(proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))


class BlockingAsyncRunner:
    """Async face over a blocking runner: the loop (and virtual time) stands still until it finishes."""

    def __init__(self, runner: CommandRunner | None = None) -> None:
        self._runner = runner or SubprocessRunner()

    async def run(self, argv: Sequence[str], *, cwd: str, time_limit: float) -> ProcessResult:
        return self._runner.run(argv, cwd=cwd, time_limit=time_limit)
