"""Drives one real ``haproxy`` in master-worker mode for a fake Dataplane instance.

``haproxy -c`` before anything is applied; reloads through the master socket (``-S``); server and
map changes through the admin (stats) socket, which the driver adds to the global section of the
extra config file it loads (the config the API serves stays as pushed). All process and socket work
goes through a ``ProcessRunner``.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from simulator.dataplane.process_runner import ProcessRunner, kill_process_group

_FAILURE_MARKERS = (
    "no such",
    "invalid",
    "require",
    "unknown",
    "error",
    "can't",
    "cannot",
    "unsupported",
    "not allowed",
    "failed",
    "expects",
)


_MAX_SOCKET_PATH = 90


class HAProxyError(RuntimeError):
    pass


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    kind: str
    reloads: int
    failed: int = 0  # the master's count of reloads that did not load (``1 [failed: 1]``)


_FAILED = re.compile(r"\[failed:\s*(\d+)\]")
# What haproxy logs when a new configuration did not load (the old workers keep running) or the
# new worker died at once (a "Former worker" exiting is the normal end of a reload).
_LOAD_FAILURES = ("Loading failure", "Current worker")


def parse_show_proc(text: str) -> list[ProcInfo]:
    procs = []
    for line in text.split("\n"):
        words = line.split()
        if len(words) >= 3 and words[0].isdigit() and words[1] in ("master", "worker"):
            reloads = int(words[2]) if words[2].isdigit() else 0
            failed = _FAILED.search(line)
            procs.append(ProcInfo(int(words[0]), words[1], reloads, int(failed.group(1)) if failed else 0))
        elif line.startswith("# old workers"):
            break
    return procs


def admin_socket_config(socket_path: str) -> str:
    """A config fragment adding the admin (stats) socket; loaded as a second ``-f`` file so that
    haproxy's line numbers for the pushed config stay the pushed config's own."""
    return f"global\n    stats socket {socket_path} mode 600 level admin\n"


class HAProxyDriver:
    def __init__(self, haproxy_bin: str, workdir: Path, runner: ProcessRunner, *, reload_wait: float = 10.0) -> None:
        self.haproxy_bin = haproxy_bin
        self.workdir = workdir
        self.runner = runner
        self.reload_wait = reload_wait
        self.config_path = workdir / "haproxy.cfg"
        # Unix socket paths are short (haproxy allows 97 bytes); deep work directories get theirs
        # in a fresh short directory under /tmp, removed on stop.
        self._own_socket_dir: Path | None = None
        socket_dir = workdir
        if len(str(workdir / "master.sock")) > _MAX_SOCKET_PATH:
            self._own_socket_dir = socket_dir = Path(tempfile.mkdtemp(prefix="hdp-", dir="/tmp"))
        self.master_socket = str(socket_dir / "master.sock")
        self.admin_socket = str(socket_dir / "admin.sock")
        self.admin_config_path = workdir / "admin-socket.cfg"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)
        self.admin_config_path.write_text(admin_socket_config(self.admin_socket))

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def translate(self, text: str) -> str:
        """How haproxy's own filesystem spells ``text``'s paths (identity here; a pod may differ)."""
        return text

    def _files(self, config: Path) -> list[str]:
        return ["-f", str(self.admin_config_path), "-f", str(config)]

    async def check(self, text: str) -> str | None:
        """``haproxy -c`` on the candidate; None when valid, else haproxy's own message."""
        candidate = self.workdir / "candidate.cfg"
        candidate.write_text(text)
        result = await self.runner.run([self.haproxy_bin, "-c", *self._files(candidate)])
        if result.returncode == 0:
            return None
        if result.returncode == 2 and "has no error" in result.output:
            return None  # valid but without listeners; in master-worker mode haproxy still runs
        return result.output.strip() or f"haproxy -c exited {result.returncode}"

    async def start(self, text: str) -> None:
        self.config_path.write_text(text)
        self._log = (self.workdir / "haproxy.log").open("ab")
        self.process = self.runner.spawn(
            [self.haproxy_bin, "-W", "-S", self.master_socket, *self._files(self.config_path)], self._log
        )
        await self._wait_for_worker(exclude=set())

    async def show_proc(self) -> list[ProcInfo]:
        return parse_show_proc(await self._master("show proc"))

    async def _master(self, command: str) -> str:
        # The master CLI keeps the connection open unless told to quit.
        return await self.runner.socket_command(self.master_socket, f"{command};quit")

    async def worker_pids(self) -> list[int]:
        return [p.pid for p in await self.show_proc() if p.kind == "worker"]

    async def _wait_for_worker(self, exclude: set[int]) -> list[int]:
        waited = 0.0
        last_error = ""
        while waited < self.reload_wait:
            if self.process is not None and self.process.poll() is not None:
                raise HAProxyError(f"haproxy exited with {self.process.returncode}: {self._log_tail()}")
            try:
                workers = await self.worker_pids()
                if workers and not set(workers) & exclude:
                    return workers
            except OSError as exc:
                last_error = str(exc)
            await self.runner.pause(0.02)
            waited += 0.02
        raise HAProxyError(f"no new haproxy worker after {self.reload_wait:g}s {last_error}".strip())

    async def reload(self, text: str) -> None:
        """Reloads through the master socket; raises with haproxy's own words when the new config
        does not load (haproxy keeps its old workers then) or haproxy is not running at all."""
        if not self.running:
            raise HAProxyError(f"haproxy is not running: cannot reach the master socket {self.master_socket}")
        procs = await self.show_proc()
        old = {p.pid for p in procs if p.kind == "worker"}
        failed_before = max((p.failed for p in procs if p.kind == "master"), default=0)
        log_offset = self._log_size()
        self.config_path.write_text(text)
        with contextlib.suppress(OSError):
            # The master re-executes itself and closes the connection; the answer is not reliable.
            await self._master("reload")
        waited = 0.0
        while waited < self.reload_wait:
            if not self.running:
                raise HAProxyError(f"haproxy exited during the reload: {self._log_since(log_offset)}")
            try:
                procs = await self.show_proc()
            except OSError:
                procs = []  # the master is re-executing
            failed = max((p.failed for p in procs if p.kind == "master"), default=0)
            if failed > failed_before:
                raise HAProxyError(f"haproxy refused the new configuration: {self._log_since(log_offset)}")
            if any(p.kind == "worker" and p.pid not in old for p in procs):
                await self._confirm_loaded(log_offset)
                return
            await self.runner.pause(0.02)
            waited += 0.02
        raise HAProxyError(f"no new haproxy worker after {self.reload_wait:g}s: {self._log_since(log_offset)}")

    async def _confirm_loaded(self, log_offset: int) -> None:
        """A new worker appeared; haproxy must not have logged that it died or did not load (a worker
        that cannot set itself up exits at once, and the master logs it)."""
        tail = self._log_since(log_offset)
        workers = [p for p in await self.show_proc() if p.kind == "worker"]
        if not workers or any(marker in tail for marker in _LOAD_FAILURES):
            raise HAProxyError(f"haproxy did not load the new configuration: {tail}")

    def _log_size(self) -> int:
        path = self.workdir / "haproxy.log"
        return path.stat().st_size if path.exists() else 0

    def _log_since(self, offset: int) -> str:
        path = self.workdir / "haproxy.log"
        if not path.exists():
            return ""
        with path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace").strip()[-2000:]

    async def runtime(self, commands: list[str]) -> str | None:
        """Sends admin-socket commands (paths translated as haproxy sees them); returns the first
        failure text, None when all succeeded."""
        if not self.running:
            return "haproxy is not running: the runtime API (admin socket) is unavailable"
        for command in commands:
            command = self.translate(command)
            try:
                answer = await self.runner.socket_command(self.admin_socket, command)
            except OSError as exc:
                return f"{command}: {exc}"
            lowered = answer.lower()
            if any(marker in lowered for marker in _FAILURE_MARKERS):
                return f"{command}: {answer.strip()}"
        return None

    async def add_server(self, target: str, arguments: str) -> str | None:
        """``add server <backend>/<server> <arguments>``: None when haproxy registered it, else its answer
        (its refusals, "Already exists a server ..." or "Backend must use a dynamic load balancing ...",
        carry none of the usual failure words)."""
        if not self.running:
            return "haproxy is not running: the runtime API (admin socket) is unavailable"
        command = self.translate(f"add server {target} {arguments}")
        try:
            answer = await self.runner.socket_command(self.admin_socket, command)
        except OSError as exc:
            return f"{command}: {exc}"
        return None if "new server registered" in answer.lower() else answer.strip()

    async def set_certificate(self, path: str, pem: str) -> str | None:
        """``set ssl cert`` (payload) then ``commit ssl cert``; None when haproxy took the new
        certificate, else its answer."""
        if not self.running:
            return "haproxy is not running: the runtime API (admin socket) is unavailable"
        path = self.translate(path)
        payload = pem.strip("\n")
        try:
            answer = await self.runner.socket_command(self.admin_socket, f"set ssl cert {path} <<\n{payload}\n")
            if "transaction" not in answer.lower():
                await self.runner.socket_command(self.admin_socket, f"abort ssl cert {path}")
                return f"set ssl cert {path}: {answer.strip()}"
            answer = await self.runner.socket_command(self.admin_socket, f"commit ssl cert {path}")
        except OSError as exc:
            return f"ssl cert {path}: {exc}"
        if "success" not in answer.lower():
            return f"commit ssl cert {path}: {answer.strip()}"
        return None

    def _log_tail(self) -> str:
        path = self.workdir / "haproxy.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None:
            kill_process_group(self.process)
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def close(self) -> None:
        """Stops haproxy for good and removes the socket directory the driver made."""
        self.stop()
        if self._own_socket_dir is not None:
            shutil.rmtree(self._own_socket_dir, ignore_errors=True)
            self._own_socket_dir = None
