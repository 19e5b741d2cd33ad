"""The fake's runtime endpoints: maps (``show map``, entries) and servers, as haproxy's memory holds them.

They act on what haproxy loaded (``FakeDataplane.haproxy``), never on the config file, and fail as
the real ones do: when haproxy is not running (the runtime socket is gone), or when the map the API
names is not one haproxy knows — the API names a map ``<maps_dir>/<name>``, haproxy by the path its
config wrote, and ``add map`` on another name answers "Unknown map identifier".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from haptic.dataplane.server_model import server_to_model
from simulator.dataplane.api_model import Answer, ApiError
from simulator.dataplane.storage import render_map, sanitize_name

if TYPE_CHECKING:
    from simulator.dataplane.instance import FakeDataplane

__all__ = ["UNKNOWN_MAP", "RuntimeEndpoints"]

UNKNOWN_MAP = "Unknown map identifier. Please use #<id> or <file>."
_NOT_RUNNING = "runtime API unavailable: haproxy is not running (no admin socket)"


class RuntimeEndpoints:
    def __init__(self, fake: FakeDataplane) -> None:
        self.fake = fake

    def _require_runtime(self, status: int = 500) -> None:
        if not self.fake.runtime_available:
            raise ApiError(status, _NOT_RUNNING)

    # -- maps -----------------------------------------------------------------------------------

    def map_identifier(self, name: str) -> str:
        """What the API sends to haproxy for ``name``: ``#<id>`` as is, else the file in the maps
        directory (sanitized, ``.map`` appended) — as client-native does when ``maps_dir`` is set."""
        if name.startswith("#"):
            return name
        return f"{self.fake.storage.dirs.maps_dir.rstrip('/')}/{sanitize_name('maps', name)}"

    def _entries(self, name: str, status: int) -> tuple[str, list[tuple[str, str]]]:
        self._require_runtime()
        identifier = self.fake.haproxy.map_identifier(self.map_identifier(name))
        entries = self.fake.haproxy.maps.get(identifier or "")
        if identifier is None or entries is None:
            raise ApiError(status, UNKNOWN_MAP)
        return identifier, entries

    def maps(self, include_unmanaged: bool) -> list[dict[str, Any]]:
        self._require_runtime()
        return self.fake.haproxy.map_listing(self.fake.storage.dirs.maps_dir, include_unmanaged)

    def one_map(self, name: str) -> dict[str, Any]:
        identifier, _ = self._entries(name, 404)
        for item in self.fake.haproxy.map_listing(self.fake.storage.dirs.maps_dir, True):
            if item["file"] == identifier:
                return item
        raise ApiError(404, UNKNOWN_MAP)

    def map_entries(self, name: str) -> list[dict[str, str]]:
        _, entries = self._entries(name, 404)
        return [{"id": _entry_id(i), "key": k, "value": v} for i, (k, v) in enumerate(entries)]

    def map_entry(self, name: str, key: str) -> dict[str, str]:
        _, entries = self._entries(name, 404)
        for i, (k, v) in enumerate(entries):
            if k == key:
                return {"id": _entry_id(i), "key": k, "value": v}
        raise ApiError(404, f"{key} not found")

    async def map_entry_write(self, name: str, key: str, value: str | None, action: str, *,
                              force_sync: bool = False) -> Answer:
        """``add`` (201; 409 when the key exists), ``set`` (200), ``delete`` (204); set and delete of
        a map or key haproxy does not know answer 404, add to an unknown map 500 (client-native's
        classification of haproxy's error)."""
        fake = self.fake
        async with fake.lock:
            identifier, entries = self._entries(name, 500 if action == "add" else 404)
            keys = [k for k, _ in entries]
            if action == "add":
                if key in keys:
                    raise ApiError(409, f"entry {key} already exists in {name}")
                command = f"add map {identifier} {key} {value or ''}".rstrip()
                new_entries = [*entries, (key, value or "")]
            elif key not in keys:
                raise ApiError(404, f"{key} not found")
            elif action == "set":
                command = f"set map {identifier} {key} {value or ''}".rstrip()
                new_entries = [(k, (value or "") if k == key else v) for k, v in entries]
            else:
                command = f"del map {identifier} {key}"
                new_entries = [(k, v) for k, v in entries if k != key]
            if fake.driver is not None:
                error = await fake.driver.runtime([command])
                if error is not None:
                    raise ApiError(500 if action == "add" else 404, error)
            fake.haproxy.maps[identifier] = new_entries
            if force_sync:
                path = fake.haproxy.map_path(identifier)
                if path is not None:
                    fake.storage.write_file(path, render_map(new_entries))
            fake.counters.runtime_map_updates += 1
            if action == "delete":
                return Answer(204)
            return Answer(201 if action == "add" else 200, body={"key": key, "value": value or ""})

    async def clear_map(self, name: str, *, force_sync: bool = False) -> Answer:
        fake = self.fake
        async with fake.lock:
            identifier, _ = self._entries(name, 404)
            if fake.driver is not None:
                error = await fake.driver.runtime([f"clear map {identifier}"])
                if error is not None:
                    raise ApiError(404, error)
            fake.haproxy.maps[identifier] = []
            path = fake.haproxy.map_path(identifier)
            if force_sync and path is not None:
                fake.storage.write_file(path, "")
            return Answer(204)

    # -- servers --------------------------------------------------------------------------------

    def _server_lines(self, backend: str) -> list[str]:
        self._require_runtime(500)
        if not self.fake.haproxy.document.has_section("backend", backend):
            raise ApiError(404, f"backend {backend} not found")
        return self.fake.haproxy.server_lines(backend)

    def servers(self, backend: str) -> list[dict[str, Any]]:
        states = self.fake.haproxy.server_states
        return [_runtime_server(number, line, lambda name: states.get((backend, name)))
                for number, line in enumerate(self._server_lines(backend), start=1)]

    def server(self, backend: str, name: str) -> dict[str, Any]:
        for item in self.servers(backend):
            if item["name"] == name:
                return item
        raise ApiError(404, f"server {name} not found in backend {backend}")

    async def set_server_state(self, backend: str, name: str, body: dict[str, Any]) -> Answer:
        self.server(backend, name)  # 404 for a server haproxy does not have
        admin = body.get("admin_state")
        if admin is not None and admin not in ("ready", "maint", "drain"):
            raise ApiError(400, f"admin_state must be one of ready, maint, drain, not {admin!r}")
        if admin is not None and self.fake.driver is not None:
            error = await self.fake.driver.runtime([f"set server {backend}/{name} state {admin}"])
            if error is not None:
                raise ApiError(500, error)
        if admin is not None:
            self.fake.counters.runtime_server_updates += 1
            self.fake.haproxy.server_states[(backend, name)] = admin
        return Answer(200, body=self.server(backend, name))

    async def add_server(self, backend: str, body: dict[str, Any]) -> Answer:
        """``POST /runtime/backends/{parent_name}/servers``: ``add server`` on the running haproxy, the
        config file untouched (the next reload forgets the server unless the config has it by then).

        As the real handler (v3.2): 400 without a name; haproxy's refusals become 404 ("No such
        backend"), 409 ("Already exists"), else 500 (a backend without a dynamic load-balancing
        algorithm, a keyword dynamic servers do not take); 201 echoing the body. Fields outside the
        RuntimeAddServer model are refused (400) where the real decoding drops them silently, which
        would leave a running server unlike its config line. HAProxy before 3.0 creates the server
        in maintenance unless told ``enabled``, which the API says only for ``maintenance: disabled``.
        """
        fake = self.fake
        async with fake.lock:
            self._require_runtime()
            name = body.get("name")
            if not isinstance(name, str) or not name:
                raise ApiError(400, "the new server must have a name")
            unknown = sorted(set(body) - RUNTIME_ADD_FIELDS)
            if unknown:
                # (the real API's decoding would drop them silently: a server unlike its config line)
                raise ApiError(400, f"invalid runtime server: unknown field(s) {', '.join(unknown)}")
            arguments = runtime_add_arguments(body)
            if fake.driver is not None:
                error = await fake.driver.add_server(f"{backend}/{name}", arguments)
            else:
                error = self._add_refusal(backend, name)
            if error is not None:
                status = 404 if "No such backend" in error else 409 if "Already exists" in error else 500
                raise ApiError(status, error)
            words = [w for w in arguments.split() if w != "enabled"]
            if "enabled" not in arguments.split() and "disabled" not in words:
                words.append("disabled")  # created in maintenance
            fake.haproxy.dynamic_servers[(backend, name)] = " ".join(["server", name, *words])
            fake.counters.runtime_server_adds += 1
            return Answer(201, body=body)

    def _add_refusal(self, backend: str, name: str) -> str | None:
        """What haproxy answers ``add server`` in the cases the fake models without a real haproxy."""
        loaded = self.fake.haproxy
        if not loaded.document.has_section("backend", backend):
            return "No such backend."
        if loaded.has_server(backend, name):
            return "Already exists a server with the same name in backend."
        if not dynamic_balance(loaded.document.section_lines("backend", backend),
                               loaded.document.section_lines("defaults", "")):
            return "Backend must use a dynamic load balancing to support dynamic servers."
        return None

    def process_info(self) -> list[dict[str, Any]]:
        self._require_runtime()
        return [{"info": {"version": self.fake.options.api_version.split()[0].lstrip("v"),
                          "process_num": 1, "pid": 1, "node": self.fake.options.name}}]


#: RuntimeAddServer fields → ``add server`` keywords, in the real serializer's order (the subset of its
#: table the fake knows; a field outside it is dropped, as one the real model does not have would be)
_ADD_FLAGS = (("agent-check", "agent-check"), ("backup", "backup"), ("check", "check"), ("ssl", "ssl"),
              ("send-proxy", "send-proxy"), ("send-proxy-v2", "send-proxy-v2"))
_ADD_VALUES = (("agent-addr", "agent-addr"), ("agent-port", "agent-port"), ("agent-inter", "agent-inter"),
               ("agent-send", "agent-send"), ("alpn", "alpn"), ("health_check_address", "addr"),
               ("health_check_port", "port"), ("check_proto", "check-proto"), ("check-sni", "check-sni"),
               ("downinter", "downinter"), ("error_limit", "error-limit"), ("fall", "fall"),
               ("fastinter", "fastinter"), ("inter", "inter"), ("maxconn", "maxconn"), ("maxqueue", "maxqueue"),
               ("minconn", "minconn"), ("observe", "observe"), ("on-error", "on-error"),
               ("on-marked-down", "on-marked-down"), ("on-marked-up", "on-marked-up"), ("proto", "proto"),
               ("rise", "rise"), ("slowstart", "slowstart"), ("sni", "sni"), ("verify", "verify"),
               ("weight", "weight"), ("ws", "ws"))

RUNTIME_ADD_FIELDS = frozenset({"name", "address", "port", "maintenance", *(f for f, _ in _ADD_FLAGS),
                                *(f for f, _ in _ADD_VALUES)})


def runtime_add_arguments(body: dict[str, Any]) -> str:
    """The ``add server`` arguments the real API sends for a RuntimeAddServer body: the address (with
    ``:port``) first, then keywords in its order; ``maintenance: enabled`` → ``disabled``,
    ``maintenance: disabled`` → ``enabled`` (what HAProxy before 3.0 needs to start the server ready)."""
    words = [str(body.get("address", "")) + (f":{body['port']}" if body.get("port") is not None else "")]
    for field_name, keyword in _ADD_FLAGS:
        if body.get(field_name) == "enabled":
            words.append(keyword)
    if body.get("maintenance") == "enabled":
        words.append("disabled")
    elif body.get("maintenance") == "disabled":
        words.append("enabled")
    for field_name, keyword in _ADD_VALUES:
        value = body.get(field_name)
        if value is not None and value != "":
            words.append(f"{keyword} {value}")
    return " ".join(words)


#: ``balance`` algorithms haproxy can add servers to at runtime without ``hash-type consistent``
_DYNAMIC_BALANCE = frozenset({"roundrobin", "leastconn", "first", "random"})


def dynamic_balance(backend_lines: list[str], defaults_lines: list[str]) -> bool:
    """Whether the backend's load balancing takes dynamic servers: roundrobin (the default), leastconn,
    first, random, or a hash with ``hash-type consistent``; not static-rr nor a map-based hash."""
    algorithm, hash_type = "roundrobin", "map-based"
    for lines in (defaults_lines, backend_lines):
        for line in lines:
            words = line.split()
            if len(words) > 1 and words[0] == "balance":
                algorithm = words[1]
            elif len(words) > 1 and words[0] == "hash-type":
                hash_type = words[1]
    return algorithm in _DYNAMIC_BALANCE or (algorithm != "static-rr" and hash_type == "consistent")


def _entry_id(index: int) -> str:
    # haproxy shows an entry's address; a stable stand-in of the same shape.
    return f"0x{0x55D155C60000 + index * 0x40:x}"


def _runtime_server(number: int, line: str, state_of: Callable[[str], str | None]) -> dict[str, Any]:
    model = server_to_model(line)
    admin = state_of(str(model["name"])) or ("maint" if model.get("maintenance") == "enabled" else "ready")
    item: dict[str, Any] = {
        "id": str(number),
        "name": model["name"],
        "address": model.get("address", ""),
        "admin_state": admin,
        "operational_state": "down" if admin == "maint" else "up",
    }
    if model.get("port") is not None:
        item["port"] = model["port"]
    return item
