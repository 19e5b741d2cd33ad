"""One fake Dataplane API instance: the state machine behind the HTTP surface.

Version counter (``# _version=N``), transactions with outdated marking, a coalescing reload agent
on the loop clock, the runtime-eligible server path (200 without reload, else 202 plus a reload),
faults as data and counters that scenarios assert on. Storage endpoints are in ``storage_api``,
runtime endpoints (maps, servers) in ``runtime_api``. ``haproxy`` (a ``LoadedState``) is what the
pod's haproxy runs, which is what runtime commands act on. With a ``HAProxyDriver`` every accepted
config passes ``haproxy -c`` first, reloads go to a real process and runtime changes to its admin
socket — and fail, as the real runtime socket does, when that haproxy is not running.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import hashlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.parser import parse_config
from haptic.dataplane.server_model import RUNTIME_SERVER_FIELDS, model_to_server_line, server_to_model
from simulator.dataplane.api_model import Answer, ApiError, check_server_model
from simulator.dataplane.config_document import VERSION_PREFIX, ConfigDocument
from simulator.dataplane.config_files import loaded_files
from simulator.dataplane.faults import Faults
from simulator.dataplane.haproxy_driver import HAProxyDriver, HAProxyError
from simulator.dataplane.loaded_state import LoadedState
from simulator.dataplane.reload_agent import ReloadAgent
from simulator.dataplane.storage import Storage

__all__ = ["DEFAULT_API_VERSION", "DEFAULT_CONFIG", "Answer", "ApiError", "Counters", "FakeDataplane",
           "FakeTransaction", "InstanceOptions"]

DEFAULT_API_VERSION = "v3.2.6 87ad0bcf"
# Wall time is derived from the loop clock so that virtual time gives stable reload IDs and dates.
# The verdicts of the last few texts parsed: a fleet is pushed one config on every pod, and parsing 3,000
# Ingresses' config costs ~0.5 s, which a real fleet pays on its own cores, not on the simulator's one.
@functools.lru_cache(maxsize=4)
def _parse_error(text: str) -> str | None:
    """Why the parser refuses ``text``, or None."""
    try:
        parse_config(text)
    except ConfigParseError as exc:
        return str(exc)
    return None


_EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC).timestamp()

DEFAULT_CONFIG = """global
    log stdout format raw local0

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
"""


@dataclass
class FakeTransaction:
    id: str
    version: int
    document: ConfigDocument
    status: str = "in_progress"

    def as_json(self) -> dict[str, Any]:
        return {"_version": self.version, "id": self.id, "status": self.status}


@dataclass
class Counters:
    reloads: int = 0
    failed_reloads: int = 0
    runtime_server_updates: int = 0
    runtime_server_adds: int = 0  # ``add server`` through the runtime endpoint (no reload)
    runtime_map_updates: int = 0
    runtime_cert_updates: int = 0
    raw_pushes: int = 0
    commits: int = 0
    requests: int = 0
    restarts: int = 0

    def as_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Snapshot:
    document: ConfigDocument
    version: int


def _runtime_commands(backend: str, server: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    target = f"{backend}/{server}"
    changed = {key for key in RUNTIME_SERVER_FIELDS if old.get(key) != new.get(key)}
    commands = []
    if changed & {"address", "port"}:
        port = f" port {new['port']}" if new.get("port") is not None else ""
        commands.append(f"set server {target} addr {new.get('address')}{port}")
    if "weight" in changed:
        commands.append(f"set server {target} weight {new.get('weight', 1)}")
    if "maintenance" in changed:
        commands.append(f"set server {target} state {'maint' if new.get('maintenance') == 'enabled' else 'ready'}")
    if "agent-check" in changed:
        commands.append(f"{'enable' if new.get('agent-check') == 'enabled' else 'disable'} agent {target}")
    if "agent-addr" in changed and new.get("agent-addr"):
        commands.append(f"set server {target} agent-addr {new['agent-addr']}")
    if "agent-send" in changed and new.get("agent-send"):
        commands.append(f"set server {target} agent-send {new['agent-send']}")
    if "health_check_port" in changed and new.get("health_check_port") is not None:
        commands.append(f"set server {target} check-port {new['health_check_port']}")
    return commands


@dataclass
class InstanceOptions:
    username: str = "admin"
    password: str = field(default="adminpwd", repr=False)
    api_version: str = DEFAULT_API_VERSION
    reload_delay: float = 1.0
    max_open_transactions: int = 20
    initial_config: str = DEFAULT_CONFIG
    name: str = "haproxy-0"
    config_file: str = "/etc/haproxy/haproxy.cfg"  # where the pod's haproxy.cfg is (relative paths)
    extra: dict[str, Any] = field(default_factory=dict)


def _initial_version(text: str) -> int:
    """The ``# _version=N`` a starting config carries (1 without one, as client-native counts)."""
    first = text.split("\n", 1)[0].strip()
    if first.startswith(VERSION_PREFIX) and first[len(VERSION_PREFIX):].strip().isdigit():
        return int(first[len(VERSION_PREFIX):].strip())
    return 1


class FakeDataplane:
    """State of one fake HAProxy pod's Dataplane API. Serve it with ``create_app``."""

    def __init__(
        self,
        options: InstanceOptions | None = None,
        *,
        driver: HAProxyDriver | None = None,
        storage: Storage | None = None,
    ) -> None:
        from simulator.dataplane.runtime_api import RuntimeEndpoints
        from simulator.dataplane.storage_api import StorageEndpoints

        self.options = options or InstanceOptions()
        self.driver = driver
        self.storage = storage or Storage()
        self.faults = Faults()
        self.counters = Counters()
        self.document = ConfigDocument.from_text(self.options.initial_config)
        self.version = _initial_version(self.options.initial_config)
        self.haproxy = LoadedState(self.document, self.storage, self.options.config_file)
        self.transactions: dict[str, FakeTransaction] = {}
        self._tx_counter = 0
        # The last configuration that loaded; None while that is the current one (no copy needed).
        self._last_good: _Snapshot | None = None
        self.reloads = ReloadAgent(self._do_reload, delay=self.options.reload_delay, day=self._day, wall=self.wall_time)
        self.lock = asyncio.Lock()
        self.files = StorageEndpoints(self)
        self.runtime = RuntimeEndpoints(self)

    def __repr__(self) -> str:
        return f"FakeDataplane({self.options.name!r}, version={self.version})"

    # -- time -----------------------------------------------------------------------------------

    @staticmethod
    def wall_time() -> float:
        try:
            return _EPOCH + asyncio.get_running_loop().time()
        except RuntimeError:
            return _EPOCH

    def _day(self) -> str:
        return datetime.datetime.fromtimestamp(self.wall_time(), datetime.UTC).strftime("%Y-%m-%d")

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Starts the real haproxy (when driven) on the initial config."""
        if self.driver is not None:
            await self.driver.start(self.document.body())
        self.haproxy.load(self.document)

    async def aclose(self) -> None:
        await self.reloads.aclose()
        if self.driver is not None:
            self.driver.close()

    async def restart(self, *, keep_storage: bool = False) -> None:
        """A pod restart: initial config, version back to its start, no transactions or reloads; the
        storage directories are emptied unless ``keep_storage`` (a volume that survives the pod)."""
        await self.reloads.aclose()
        self.reloads.reset()
        self.transactions.clear()
        if not keep_storage:
            self.storage.clear()
        self.document = ConfigDocument.from_text(self.options.initial_config)
        self.version = _initial_version(self.options.initial_config)
        self._last_good = None
        self.counters.restarts += 1
        if self.driver is not None:
            self.driver.stop()
            await self.driver.start(self.document.body())
        self.haproxy.load(self.document)

    @property
    def runtime_available(self) -> bool:
        """Whether the runtime API answers: while haproxy runs (on sim: unless ``haproxy_down``)."""
        return not self.faults.haproxy_down and (self.driver is None or self.driver.running)

    def haproxy_down(self) -> None:
        """haproxy dies (the container keeps the API): runtime endpoints fail, reloads fail, config
        and storage writes still go to the files."""
        self.faults.haproxy_down = True
        if self.driver is not None:
            self.driver.stop()

    async def haproxy_up(self) -> None:
        """haproxy starts again, from the configuration on disk."""
        self.faults.haproxy_down = False
        if self.driver is not None and not self.driver.running:
            await self.driver.start(self.document.body())
        self.haproxy.load(self.document)

    # -- faults (also reachable through the admin endpoint) ------------------------------------

    def inject_errors(self, count: int, status: int = 503, path: str = "") -> None:
        self.faults.error_count, self.faults.error_status, self.faults.error_path = count, status, path

    def slow_down(self, seconds: float) -> None:
        self.faults.delay = seconds

    def conflict_storm(self, count: int) -> None:
        self.faults.conflict_count = count

    def fail_next_reloads(self, count: int = 1) -> None:
        self.faults.fail_reloads = count

    def clear_faults(self) -> None:
        self.faults = Faults()

    def take_injected_error(self, path: str) -> int | None:
        if self.faults.error_count > 0 and self.faults.error_path in path:
            self.faults.error_count -= 1
            return self.faults.error_status
        return None

    def _check_version(self, version: int | None) -> None:
        if self.faults.conflict_count > 0:
            self.faults.conflict_count -= 1
            raise ApiError(409, f"version mismatch (injected), current version is {self.version}")
        if version is not None and version != self.version:
            raise ApiError(409, f"version mismatch: got {version}, current version is {self.version}")

    # -- reloads --------------------------------------------------------------------------------

    async def _do_reload(self) -> str | None:
        self.counters.reloads += 1
        loading, loading_version = self.document, self.version
        error: str | None = None
        if self.faults.haproxy_down:
            error = "reload failed: haproxy is not running (master socket unavailable)"
        elif self.faults.fail_reloads > 0:
            self.faults.fail_reloads -= 1
            error = "reload failed (injected fault)"
        elif self.driver is not None:
            try:
                await self.driver.reload(loading.body())
            except (HAProxyError, OSError) as exc:
                error = f"reload failed: {exc}"
        changed_meanwhile = self.document is not loading
        if error is not None:
            # As the real agent: restore the last configuration that loaded.
            self.counters.failed_reloads += 1
            if self._last_good is not None:
                self.document, self.version = self._last_good.document, self._last_good.version
            self._last_good = None
            return error
        self.haproxy.load(loading)
        # A write that arrived while haproxy reloaded waits for the next reload: what just loaded
        # is what a failure of that one falls back to.
        self._last_good = _Snapshot(loading, loading_version) if changed_meanwhile else None
        return None

    def remember_good(self, *, copy: bool) -> None:
        """Keeps the running config before a change that needs a reload. ``copy`` when the change
        edits the current document in place; writes that replace the document need no copy."""
        if self._last_good is None:
            document = self.document.copy() if copy else self.document
            self._last_good = _Snapshot(document, self.version)

    def reload_status(self, reload_id: str) -> dict[str, Any]:
        record = self.reloads.status(reload_id)
        if record is None:
            raise ApiError(404, f"reload {reload_id} not found")
        return record.as_json()

    async def force_reload(self) -> None:
        """Reloads now (``force_reload``); the API answers an error when that reload fails."""
        reload_id = self.reloads.request()
        await self.reloads.flush()
        record = self.reloads.records.get(reload_id)
        if record is not None and record.status == "failed":
            raise ApiError(500, record.response or "reload failed")

    async def after_write(self, status: int, body: Any = None, *, force: bool = False, skip: bool = False,
                          text: str | None = None, media_type: str = "text/plain") -> Answer:
        """The answer to a write that needs a reload: ``status`` without one (``skip_reload``) or
        after one (``force_reload``), else 202 with the ``Reload-ID`` of a scheduled one."""
        if skip:
            return Answer(status, body=body, text=text, media_type=media_type)
        if force:
            await self.force_reload()
            return Answer(status, body=body, text=text, media_type=media_type)
        return Answer(202, body=body, text=text, media_type=media_type, reload_id=self.reloads.request())

    # -- configuration --------------------------------------------------------------------------

    def raw(self) -> str:
        return self.document.render(self.version)

    async def _validate(self, text: str) -> None:
        error = _parse_error(text)
        if error is not None:
            raise ApiError(400, f"invalid configuration: {error}")
        files = loaded_files(text, self.storage.read_file, posixpath.dirname(self.options.config_file))
        missing = files.missing(lambda path: self.storage.read_file(path) is not None, self.storage.virtual_root)
        if missing:
            # What haproxy -c says, in substance: it cannot open a file the config names.
            details = "; ".join(f"line {ref.line}: cannot open {ref.kind} '{ref.path}'" for ref in missing)
            raise ApiError(400, f"invalid configuration: {details}")
        if self.driver is not None:
            error = await self.driver.check(text)
            if error is not None:
                raise ApiError(400, f"haproxy -c failed: {error}")

    async def post_raw(self, text: str, version: int | None, *, skip_reload: bool = False,
                       force_reload: bool = False, only_validate: bool = False) -> Answer:
        async with self.lock:
            if text and "\n" not in text:
                raise ApiError(400, "invalid configuration: no newline character found")
            if version is None and not only_validate:
                raise ApiError(400, "version or transaction_id required")
            if not only_validate:
                self._check_version(version)
            document = ConfigDocument.from_text(text)
            await self._validate(document.body())
            if only_validate:
                return Answer(202, text=self.raw())
            if not skip_reload:
                self.remember_good(copy=False)
            self.document = document
            self.version += 1
            self.counters.raw_pushes += 1
            return await self.after_write(201, text=self.raw(), skip=skip_reload, force=force_reload)

    # -- servers --------------------------------------------------------------------------------

    def _document_for(self, transaction_id: str | None) -> ConfigDocument:
        if transaction_id is None:
            return self.document
        transaction = self.transactions.get(transaction_id)
        if transaction is None:
            raise ApiError(404, f"transaction {transaction_id} not found")
        if transaction.status != "in_progress":
            raise ApiError(406, f"transaction {transaction_id} is {transaction.status}")
        return transaction.document

    def _backend(self, backend: str, transaction_id: str | None) -> ConfigDocument:
        document = self._document_for(transaction_id)
        if not document.has_section("backend", backend):
            raise ApiError(404, f"backend {backend} not found")
        return document

    def get_server(self, backend: str, name: str, transaction_id: str | None = None) -> dict[str, Any]:
        line = self._backend(backend, transaction_id).server_line(backend, name)
        if line is None:
            raise ApiError(404, f"server {name} not found in backend {backend}")
        return server_to_model(line)

    def list_servers(self, backend: str, transaction_id: str | None = None) -> list[dict[str, Any]]:
        document = self._backend(backend, transaction_id)
        return [server_to_model(line) for line in document.server_lines(backend)]

    @staticmethod
    def _write_mode(version: int | None, transaction_id: str | None, force_reload: bool) -> None:
        if version is not None and transaction_id is not None:
            raise ApiError(400, "both version and transaction specified, specify only one")
        if version is None and transaction_id is None:
            raise ApiError(400, "version or transaction not specified")
        if transaction_id is not None and force_reload:
            raise ApiError(400, "Both force_reload and transaction specified, specify only one")

    def _server_line(self, model: dict[str, Any]) -> str:
        check_server_model(model)
        try:
            line = model_to_server_line(model)
            server_to_model(line)
        except (ConfigParseError, KeyError, TypeError, ValueError) as exc:
            raise ApiError(400, f"invalid server model: {exc}") from exc
        return line

    async def replace_server(
        self, backend: str, name: str, model: dict[str, Any], *, version: int | None, transaction_id: str | None,
        force_reload: bool = False,
    ) -> Answer:
        async with self.lock:
            self._write_mode(version, transaction_id, force_reload)
            if version is not None:
                self._check_version(version)
            current = self.get_server(backend, name, transaction_id)
            model = {**model, "name": name}
            new_line = self._server_line(model)
            document = self._document_for(transaction_id)
            if transaction_id is not None:
                document.replace_server_line(backend, name, new_line)
                return Answer(202, body=model)
            changed = {k for k in current.keys() | model.keys() if current.get(k) != model.get(k)}
            runtime_ok = changed <= RUNTIME_SERVER_FIELDS
            if runtime_ok and changed:
                runtime_ok = await self._server_runtime(backend, name, current, model)
            if not runtime_ok:
                self.remember_good(copy=True)
            document.replace_server_line(backend, name, new_line)
            if runtime_ok and changed and (self.haproxy.document is not document
                                           or (backend, name) in self.haproxy.dynamic_servers):
                self.haproxy.replace_server_line(backend, name, new_line)  # haproxy's memory too
            self.version += 1
            if runtime_ok:
                self.counters.runtime_server_updates += 1
                return Answer(200, body=model)
            return await self.after_write(200, model, force=force_reload)

    async def _server_runtime(self, backend: str, name: str, current: dict[str, Any], model: dict[str, Any]) -> bool:
        """Applies a runtime-only change to the running haproxy; False when that is impossible (no
        runtime API, a server haproxy has not loaded yet, a refused command): a reload it is."""
        if not self.runtime_available or not self.haproxy.has_server(backend, name):
            return False
        if self.driver is None:
            return True
        return await self.driver.runtime(_runtime_commands(backend, name, current, model)) is None

    async def create_server(self, backend: str, model: dict[str, Any], *, version: int | None,
                            transaction_id: str | None, force_reload: bool = False) -> Answer:
        async with self.lock:
            self._write_mode(version, transaction_id, force_reload)
            if version is not None:
                self._check_version(version)
            document = self._backend(backend, transaction_id)
            name = str(model.get("name", ""))
            if document.server_line(backend, name) is not None:
                raise ApiError(409, f"server {name} already exists in backend {backend}")
            line = self._server_line(model)
            if transaction_id is None:
                self.remember_good(copy=True)
            document.add_server_line(backend, line)
            if transaction_id is not None:
                return Answer(202, body=model)
            self.version += 1
            # The real API adds the server through the runtime API when it can (no default-server
            # involved); the fake always reloads, which is the API's answer when that fails.
            return await self.after_write(201, model, force=force_reload)

    async def delete_server(self, backend: str, name: str, *, version: int | None, transaction_id: str | None,
                            force_reload: bool = False) -> Answer:
        async with self.lock:
            self._write_mode(version, transaction_id, force_reload)
            if version is not None:
                self._check_version(version)
            document = self._backend(backend, transaction_id)
            if document.server_line(backend, name) is None:
                raise ApiError(404, f"server {name} not found in backend {backend}")
            if transaction_id is None:
                self.remember_good(copy=True)
            document.delete_server_line(backend, name)
            if transaction_id is not None:
                return Answer(202)
            self.version += 1
            return await self.after_write(204, force=force_reload)

    # -- transactions ---------------------------------------------------------------------------

    def start_transaction(self, version: int | None) -> FakeTransaction:
        if version is None:
            raise ApiError(400, "version is required")
        self._check_version(version)
        open_count = sum(1 for t in self.transactions.values() if t.status == "in_progress")
        if open_count >= self.options.max_open_transactions:
            raise ApiError(429, "too many open transactions")
        self._tx_counter += 1
        digest = hashlib.sha256(f"{self.options.name}/{self._tx_counter}".encode()).hexdigest()
        tx_id = f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"
        transaction = FakeTransaction(id=tx_id, version=version, document=self.document.copy())
        self.transactions[tx_id] = transaction
        return transaction

    async def commit_transaction(self, tx_id: str, *, force_reload: bool) -> Answer:
        async with self.lock:
            transaction = self.transactions.get(tx_id)
            if transaction is None:
                raise ApiError(404, f"transaction {tx_id} not found")
            if transaction.status in ("outdated", "failed"):
                raise ApiError(406, f"transaction {tx_id} is {transaction.status}")
            if transaction.version != self.version or self.faults.conflict_count > 0:
                if self.faults.conflict_count > 0:
                    self.faults.conflict_count -= 1
                transaction.status = "outdated"
                raise ApiError(409, f"version mismatch: transaction at {transaction.version}, current {self.version}")
            try:
                await self._validate(transaction.document.body())
            except ApiError:
                transaction.status = "failed"
                raise
            self.remember_good(copy=False)
            self.document = transaction.document
            self.version += 1
            self.counters.commits += 1
            transaction.status = "success"
            del self.transactions[tx_id]
            for other in self.transactions.values():
                if other.status == "in_progress" and other.version <= transaction.version:
                    other.status = "outdated"
            return await self.after_write(200, transaction.as_json(), force=force_reload)

    def abort_transaction(self, tx_id: str) -> None:
        if self.transactions.pop(tx_id, None) is None:
            raise ApiError(404, f"transaction {tx_id} not found")

    # -- info and state -------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        return {
            "api": {"version": self.options.api_version, "build_date": "2026-01-01T00:00:00Z"},
            "system": {"hostname": self.options.name},
        }

    def state(self) -> dict[str, Any]:
        return {
            "name": self.options.name,
            "version": self.version,
            "counters": self.counters.as_json(),
            "faults": self.faults.as_json(),
            "pending_reload": self.reloads.pending,
            "open_transactions": sorted(t.id for t in self.transactions.values() if t.status == "in_progress"),
            "haproxy_running": self.runtime_available,
        }
