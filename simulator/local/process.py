"""The controller as a subprocess: start it with its environment, stream its log, stop it cleanly.

Started in its own session so that a terminal's Ctrl-C reaches only the orchestrator, which then
stops the controller deliberately (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence

LineSink = Callable[[str, str], None]

HAPTIC_COMMAND: tuple[str, ...] = (sys.executable, "-m", "haptic.cli")
DEFAULT_COMMAND: tuple[str, ...] = (*HAPTIC_COMMAND, "run")


def bytecode_env() -> dict[str, str]:
    """A controller subprocess keeps its compiled bytecode, as a controller image ships it: in an environment
    with ``PYTHONDONTWRITEBYTECODE`` every start compiled all of haptic's sources again (~0.4 s of each
    controller start on the 2-core machine). The cache is outside the source tree, one per user."""
    cache = os.path.join(tempfile.gettempdir(), f"haptic-local-bytecode-{os.getuid()}")
    return {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": cache}


def controller_command(haproxy_bin: str, base: Sequence[str] = DEFAULT_COMMAND, *,
                       bind_address: str = "127.0.0.1") -> list[str]:
    """``haptic run`` for a local stack: servers on a loopback address only, this haproxy for validation."""
    return [*base, "--bind-address", bind_address, "--haproxy-binary", haproxy_bin]


class ControllerProcess:
    """One ``haptic run`` (or any command) whose output lines go to ``sink(name, line)``."""

    def __init__(self, name: str, env: Mapping[str, str], *, command: Sequence[str] = DEFAULT_COMMAND,
                 sink: LineSink | None = None, keep_lines: int = 2000) -> None:
        self.name = name
        self.command = list(command)
        self.env = dict(env)
        self.sink = sink
        self.lines: collections.deque[str] = collections.deque(maxlen=keep_lines)
        self.line_count = 0  # every line read, also those the bounded ``lines`` dropped
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._new_line = asyncio.Event()

    def __repr__(self) -> str:
        state = "not started" if self.process is None else f"pid {self.process.pid}, rc {self.returncode}"
        return f"ControllerProcess({self.name!r}, {state})"

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        env = {**os.environ, **self.env}
        self.process = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, env=env, start_new_session=True)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        while True:
            raw = await self.process.stdout.readline()
            if not raw:
                break
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            self.line_count += 1
            self._new_line.set()
            if self.sink is not None:
                self.sink(self.name, line)
        await self.process.wait()
        self._new_line.set()

    async def wait_for_line(self, predicate: Callable[[str], bool], within: float) -> str | None:
        """The first line (already seen or to come) matching ``predicate``; None after ``within`` seconds or on exit."""
        seen = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            lines = list(self.lines)
            for line in lines[seen:]:
                if predicate(line):
                    return line
            seen = len(lines)
            if not self.running and (self._reader is None or self._reader.done()):
                return None
            self._new_line.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_line.wait(), remaining)

    async def kill(self) -> int | None:
        """A crash: SIGKILL to the process group, nothing released; returns the exit code."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        return await self.stop(grace=5.0)

    async def stop(self, grace: float = 10.0) -> int | None:
        """SIGTERM the process group, SIGKILL after ``grace`` seconds; returns the exit code."""
        if self.process is None:
            return None
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 5)
        return self.process.returncode
