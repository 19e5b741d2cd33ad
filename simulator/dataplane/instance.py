"""One fake Dataplane API instance: the state machine behind the HTTP surface.

Version counter (``# _version=N``), transactions with outdated marking, a coalescing reload agent
on the loop clock, storage, the runtime-eligible server path (200 without reload, else 202 plus a
reload), runtime map entries, faults as data and counters that scenarios assert on. With a
``HAProxyDriver`` every accepted config passes ``haproxy -c`` first, reloads go to a real process
and runtime changes to its admin socket.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.parser import parse_config
from haptic.dataplane.server_model import RUNTIME_SERVER_FIELDS, model_to_server_line, server_to_model
from simulator.dataplane.config_document import ConfigDocument
from simulator.dataplane.faults import Faults
from simulator.dataplane.haproxy_driver import HAProxyDriver, HAProxyError
from simulator.dataplane.reload_agent import ReloadAgent
from simulator.dataplane.storage import (
    InvalidCertificateError,
    Storage,
    certificate_info,
    parse_map,
    render_map,
    sanitize_name,
)

DEFAULT_API_VERSION = "v3.2.6 87ad0bcf"
# Wall time is derived from the loop clock so that virtual time gives stable reload IDs and dates.
_EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC).timestamp()

DEFAULT_CONFIG = """global
    log stdout format raw local0

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
"""


class ApiError(Exception):
    """An answer other than success: status plus the API's error message."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"{status}: {message}")


@dataclass
class Answer:
    status: int
    body: Any = None
    reload_id: str | None = None
    text: str | None = None
    media_type: str = "text/plain"


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
    runtime_map_updates: int = 0
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
    if "agent_check" in changed:
        commands.append(f"{'enable' if new.get('agent_check') == 'enabled' else 'disable'} agent {target}")
    if "agent_addr" in changed and new.get("agent_addr"):
        commands.append(f"set server {target} agent-addr {new['agent_addr']}")
    if "agent_send" in changed and new.get("agent_send"):
        commands.append(f"set server {target} agent-send {new['agent_send']}")
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
    extra: dict[str, Any] = field(default_factory=dict)


class FakeDataplane:
    """State of one fake HAProxy pod's Dataplane API. Drive it through ``asgi_app()``."""

    def __init__(
        self,
        options: InstanceOptions | None = None,
        *,
        driver: HAProxyDriver | None = None,
        storage: Storage | None = None,
    ) -> None:
        self.options = options or InstanceOptions()
        self.driver = driver
        self.storage = storage or Storage()
        self.faults = Faults()
        self.counters = Counters()
        self.document = ConfigDocument.from_text(self.options.initial_config)
        self.version = 1
        self.transactions: dict[str, FakeTransaction] = {}
        self._tx_counter = 0
        # The last configuration that loaded; None while that is the current one (no copy needed).
        self._last_good: _Snapshot | None = None
        self.reloads = ReloadAgent(self._do_reload, delay=self.options.reload_delay, day=self._day, wall=self.wall_time)
        self._lock = asyncio.Lock()

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

    async def aclose(self) -> None:
        await self.reloads.aclose()
        if self.driver is not None:
            self.driver.close()

    async def restart(self) -> None:
        """A pod restart: initial config, version 1, empty storage, no transactions or reloads."""
        await self.reloads.aclose()
        self.reloads.reset()
        self.transactions.clear()
        self.storage.clear()
        self.document = ConfigDocument.from_text(self.options.initial_config)
        self.version = 1
        self._last_good = None
        self.counters.restarts += 1
        if self.driver is not None:
            self.driver.stop()
            await self.driver.start(self.document.body())

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
        if self.faults.fail_reloads > 0:
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
        # A write that arrived while haproxy reloaded waits for the next reload: what just loaded
        # is what a failure of that one falls back to.
        self._last_good = _Snapshot(loading, loading_version) if changed_meanwhile else None
        return None

    def _remember_good(self, *, copy: bool) -> None:
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

    # -- configuration --------------------------------------------------------------------------

    def raw(self) -> str:
        return self.document.render(self.version)

    async def _validate(self, text: str) -> None:
        try:
            parse_config(text)
        except ConfigParseError as exc:
            raise ApiError(400, f"invalid configuration: {exc}") from exc
        if self.driver is not None:
            error = await self.driver.check(text)
            if error is not None:
                raise ApiError(400, f"haproxy -c failed: {error}")

    async def post_raw(self, text: str, version: int | None) -> Answer:
        async with self._lock:
            if version is None:
                raise ApiError(400, "version or transaction_id required")
            if "\n" not in text:
                raise ApiError(400, "configuration must contain a newline")
            self._check_version(version)
            document = ConfigDocument.from_text(text)
            await self._validate(document.body())
            self._remember_good(copy=False)
            self.document = document
            self.version += 1
            self.counters.raw_pushes += 1
            reload_id = self.reloads.request()
            return Answer(202, reload_id=reload_id, text=self.raw())

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

    def get_server(self, backend: str, name: str, transaction_id: str | None = None) -> dict[str, Any]:
        document = self._document_for(transaction_id)
        if not document.has_section("backend", backend):
            raise ApiError(404, f"backend {backend} not found")
        line = document.server_line(backend, name)
        if line is None:
            raise ApiError(404, f"server {name} not found in backend {backend}")
        return server_to_model(line)

    async def replace_server(
        self, backend: str, name: str, model: dict[str, Any], *, version: int | None, transaction_id: str | None
    ) -> Answer:
        async with self._lock:
            if (version is None) == (transaction_id is None):
                raise ApiError(400, "exactly one of version and transaction_id is required")
            if version is not None:
                self._check_version(version)
            current = self.get_server(backend, name, transaction_id)
            model = {**model, "name": name}
            try:
                new_line = model_to_server_line(model)
                server_to_model(new_line)
            except (ConfigParseError, KeyError, TypeError, ValueError) as exc:
                raise ApiError(400, f"invalid server model: {exc}") from exc
            document = self._document_for(transaction_id)
            if transaction_id is not None:
                document.replace_server_line(backend, name, new_line)
                return Answer(202, body=model)
            changed = {k for k in current.keys() | model.keys() if current.get(k) != model.get(k)}
            runtime_ok = changed <= RUNTIME_SERVER_FIELDS
            if runtime_ok and changed and self.driver is not None and self.driver.running:
                error = await self.driver.runtime(_runtime_commands(backend, name, current, model))
                runtime_ok = error is None
            if not runtime_ok:
                self._remember_good(copy=True)
            document.replace_server_line(backend, name, new_line)
            self.version += 1
            if runtime_ok:
                self.counters.runtime_server_updates += 1
                return Answer(200, body=model)
            return Answer(202, body=model, reload_id=self.reloads.request())

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
        async with self._lock:
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
            self._remember_good(copy=False)
            self.document = transaction.document
            self.version += 1
            self.counters.commits += 1
            transaction.status = "success"
            del self.transactions[tx_id]
            for other in self.transactions.values():
                if other.status == "in_progress" and other.version <= transaction.version:
                    other.status = "outdated"
            reload_id = self.reloads.request()
            if force_reload:
                await self.reloads.flush()
                return Answer(200, body=transaction.as_json())
            return Answer(202, body=transaction.as_json(), reload_id=reload_id)

    def abort_transaction(self, tx_id: str) -> None:
        if self.transactions.pop(tx_id, None) is None:
            raise ApiError(404, f"transaction {tx_id} not found")

    # -- storage --------------------------------------------------------------------------------

    def storage_create(self, kind: str, name: str, content: str) -> Answer:
        name = sanitize_name(kind, name)
        if self.storage.get(kind, name) is not None:
            raise ApiError(409, f"file {name} already exists")
        if kind == "ssl_certificates":
            try:
                certificate_info(content)
            except InvalidCertificateError as exc:
                raise ApiError(400, str(exc)) from exc
        stored = self.storage.put(kind, name, content)
        body = {"storage_name": name, "file": stored.path, "size": len(content.encode()), "description": ""}
        return Answer(201, body=body)

    def storage_replace(self, kind: str, name: str, content: str) -> Answer:
        stored = self.storage.get(kind, name)
        if stored is None:
            raise ApiError(404, f"file {name} not found")
        if kind == "ssl_certificates":
            try:
                certificate_info(content)
            except InvalidCertificateError as exc:
                raise ApiError(400, str(exc)) from exc
        self.storage.put(kind, name, content)
        body = {"storage_name": name, "file": stored.path}
        if kind == "ssl_certificates" and not self.document.references(name):
            return Answer(200, body=body)
        return Answer(202, body=body, reload_id=self.reloads.request())

    def storage_delete(self, kind: str, name: str) -> Answer:
        if self.storage.get(kind, name) is None:
            raise ApiError(404, f"file {name} not found")
        if self.document.references(name):
            raise ApiError(409, f"rejecting attempt to delete file {name} referenced in haproxy conf")
        self.storage.delete(kind, name)
        return Answer(204)

    def storage_get(self, kind: str, name: str) -> Answer:
        stored = self.storage.get(kind, name)
        if stored is None:
            raise ApiError(404, f"file {name} not found")
        if kind == "ssl_certificates":
            info = certificate_info(stored.content)
            return Answer(200, body={"storage_name": name, "file": stored.path, "size": len(stored.content), **info})
        return Answer(200, text=stored.content, media_type="application/octet-stream")

    # -- runtime map entries --------------------------------------------------------------------

    def _map(self, name: str) -> tuple[str, list[tuple[str, str]]]:
        stored = self.storage.get("maps", name)
        if stored is None:
            raise ApiError(404, f"map {name} not found")
        return stored.path, parse_map(stored.content)

    def map_entries(self, name: str) -> list[dict[str, str]]:
        _, entries = self._map(name)
        return [{"key": k, "value": v, "id": k} for k, v in entries]

    async def map_entry_write(self, name: str, key: str, value: str | None, action: str) -> Answer:
        async with self._lock:
            path, entries = self._map(name)
            keys = [k for k, _ in entries]
            if action == "add":
                if key in keys:
                    raise ApiError(409, f"entry {key} already exists in {name}")
                entries.append((key, value or ""))
                command = f"add map {path} {key} {value or ''}".rstrip()
            elif key not in keys:
                raise ApiError(404, f"entry {key} not found in {name}")
            elif action == "set":
                entries = [(k, value or "" if k == key else v) for k, v in entries]
                command = f"set map {path} {key} {value or ''}".rstrip()
            else:
                entries = [(k, v) for k, v in entries if k != key]
                command = f"del map {path} {key}"
            if self.driver is not None and self.driver.running:
                error = await self.driver.runtime([command])
                if error is not None:
                    raise ApiError(500, error)
            self.storage.put("maps", name, render_map(entries))
            self.counters.runtime_map_updates += 1
            if action == "delete":
                return Answer(204)
            return Answer(201 if action == "add" else 200, body={"key": key, "value": value or "", "id": key})

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
        }
