"""The process-runner port: how the fake runs ``haproxy`` and talks to its sockets.

Two adapters. ``BlockingProcessRunner`` does the work synchronously inside the coroutine, so the
event loop (and a virtual clock such as looptime's) does not advance while real work runs — the
sim backend uses it. ``AsyncProcessRunner`` awaits the work (asyncio subprocesses and unix
sockets) — the live/local tier uses it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Protocol


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    output: str


class ProcessRunner(Protocol):
    async def run(self, argv: Sequence[str], *, limit: float = 30.0) -> CommandResult: ...

    async def socket_command(self, path: str, command: str, *, limit: float = 5.0) -> str: ...

    async def pause(self, seconds: float) -> None:
        """Waits in real time (used while a real process catches up)."""
        ...

    def spawn(self, argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        """Starts a long-running process in its own process group."""
        ...


def _spawn(argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def kill_process_group(process: subprocess.Popen[bytes], grace: float = 3.0) -> None:
    """SIGTERM the whole group, then SIGKILL what is left; never raises for a gone process."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        process.wait(grace)


class BlockingProcessRunner:
    """Blocks the event loop for the duration of the real work (virtual time stands still)."""

    async def run(self, argv: Sequence[str], *, limit: float = 30.0) -> CommandResult:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=limit, check=False)  # noqa: ASYNC221
        return CommandResult(done.returncode, done.stdout + done.stderr)

    async def socket_command(self, path: str, command: str, *, limit: float = 5.0) -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(limit)
            sock.connect(path)
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    async def pause(self, seconds: float) -> None:
        time.sleep(seconds)  # noqa: ASYNC251 - blocking on purpose, see the module docstring

    def spawn(self, argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        return _spawn(argv, log)


class AsyncProcessRunner:
    """Awaits real work; the loop keeps serving other tasks meanwhile."""

    async def run(self, argv: Sequence[str], *, limit: float = 30.0) -> CommandResult:
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), limit)
        except TimeoutError:
            process.kill()
            await process.wait()
            return CommandResult(-1, f"timed out after {limit:g}s")
        return CommandResult(process.returncode or 0, out.decode(errors="replace"))

    async def socket_command(self, path: str, command: str, *, limit: float = 5.0) -> str:
        async def talk() -> str:
            reader, writer = await asyncio.open_unix_connection(path)
            try:
                writer.write(command.encode() + b"\n")
                await writer.drain()
                return (await reader.read()).decode(errors="replace")
            finally:
                writer.close()

        return await asyncio.wait_for(talk(), limit)

    async def pause(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def spawn(self, argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[bytes]:
        return _spawn(argv, log)
