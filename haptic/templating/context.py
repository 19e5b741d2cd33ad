"""The render context: read-only store views, path resolver, file registry, server slots and state.

One ``RenderSession`` is created per render pass; it holds everything that is mutable during the
pass (files registered by templates, ``first_seen`` keys, warnings, ``shared`` values), so the
compiled templates and the stores stay untouched and renders are repeatable.
"""

from __future__ import annotations

import ipaddress
import math
import posixpath
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import repeat
from operator import is_, itemgetter
from socket import inet_aton
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from jinja2 import Undefined

from haptic.core.identity import Recent, same_items
from haptic.templating import fragments
from haptic.templating.current_config import CurrentBackend, CurrentConfig
from haptic.templating.errors import TemplateFailure
from haptic.templating.notices import ObjectNotice, object_ref
from haptic.templating.seen_keys import SeenKeys

FILE_KINDS = ("map", "file", "cert", "crt-list")
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9_\-]")


class StoreLike(Protocol):
    """What the render context needs from a resource store (``haptic.k8s.store.ResourceStore``)."""

    def list(self) -> Sequence[Any]: ...

    def fetch(self, *keys: str) -> Sequence[Any]: ...

    def get_single(self, *keys: str) -> Any: ...

    def __len__(self) -> int: ...


#: the lists ``StoreView.list`` handed out, by the identity of the store's tuple they hold
_AS_LISTS: Recent[list[Any]] = Recent(16)


class StoreView:
    """Read-only face of a store for templates: ``list()``, ``fetch(*keys)``, ``get_single(*keys)``.
    Reads inside a ``{% fragment %}`` are journalled under ``role`` (see ``fragments``)."""

    __slots__ = ("_lookup", "_role", "_store")

    def __init__(self, store: StoreLike, role: str = "store:?") -> None:
        self._store = store
        self._role = role
        # a store that keeps its answers as tuples hands them out as they are (``ResourceStore.lookup``): a read
        # copies nothing for its journal entry
        self._lookup: Callable[..., tuple[Any, ...]] | None = getattr(store, "lookup", None)

    def list(self) -> Sequence[Any]:
        found = self._found("list", ())
        # the same list for the same answer of the store (templates change nothing): passes over it that know their
        # last input (``same_call``) know it again at once, and no 10,000 references are copied per call
        return _AS_LISTS.answer(found, "list", partial(list, found))

    def fetch(self, *keys: Any) -> Sequence[Any]:
        return list(self._found("fetch", _as_text(keys)))

    def lookup(self, *keys: Any) -> tuple[Any, ...]:
        """``fetch`` as a tuple, the store's own where it keeps one (for Python helpers: no copy)."""
        return self._found("fetch", _as_text(keys))

    def _found(self, method: str, texts: tuple[str, ...]) -> tuple[Any, ...]:
        # journalled with the keys as the store's index holds them (text): a replay tests them against what the
        # store's writes touched (``ResourceStore.changed_since``) as they are
        lookup = self._lookup
        if lookup is not None:
            found = lookup(*texts)
        else:
            found = tuple(self._store.list() if method == "list" else self._store.fetch(*texts))
        fragments.note(fragments.READ, self._role, method, texts, ("objects", found))
        return found

    def get_single(self, *keys: Any) -> Any:
        texts = _as_text(keys)
        result = self._store.get_single(*texts)
        fragments.note(fragments.READ, self._role, "get_single", texts, ("objects", (result,)))
        return result

    def count(self) -> int:
        fragments.uncacheable()
        return len(self._store)

    def __len__(self) -> int:
        fragments.uncacheable()
        return len(self._store)


def _as_text(keys: tuple[Any, ...]) -> tuple[str, ...]:
    """Lookup keys as the store's index holds them (text); the very tuple when they are already."""
    for key in keys:
        if type(key) is not str:
            return tuple(map(str, keys))
    return keys


class SkippingStore:
    """A store without the objects a render must leave out (``RenderInputs.skip``), or with the version
    ``previous`` holds for them (their version in the last config that validated): per-object isolation
    works with any template, not only those that ``reject("skipped")``. Answers keep namespace/name order."""

    __slots__ = ("_previous", "_skip", "_store")

    def __init__(self, store: StoreLike, skip: frozenset[tuple[str, str, str]],
                 previous: Mapping[tuple[str, str, str], Any] | None = None) -> None:
        self._store = store
        self._skip = skip
        self._previous = previous or {}

    def _swap(self, objs: Sequence[Any]) -> list[Any]:
        kept = []
        for obj in objs:
            key = _skip_key(obj)
            if key not in self._skip:
                kept.append(obj)
            elif key in self._previous:
                kept.append(self._previous[key])
        return kept

    def list(self) -> Sequence[Any]:
        return self._swap(self._store.list())

    def fetch(self, *keys: str) -> Sequence[Any]:
        index_keys = getattr(self._store, "index_keys", None)
        if not keys or index_keys is None or not self._previous:
            return self._swap(self._store.fetch(*keys))
        # A previous version may sit under other index keys than the current one (a label changed).
        found = [obj for obj in self._store.fetch(*keys) if _skip_key(obj) not in self._skip]
        wanted = tuple(str(k) for k in keys)
        for key, obj in self._previous.items():
            if key in self._skip and any(tuple(full[: len(wanted)]) == wanted for full in index_keys(obj)):
                found.append(obj)
        found.sort(key=_identity)
        return found

    def get_single(self, *keys: str) -> Any:
        found = self.fetch(*keys)
        if len(found) > 1:
            return self._store.get_single(*keys)  # the store's own error for an ambiguous lookup
        return found[0] if found else None

    def __len__(self) -> int:
        return len(self._swap(self._store.list()))


def _skip_key(obj: Any) -> tuple[str, str, str] | None:
    ref = object_ref(obj)
    return ref.key if ref is not None else None


def _identity(obj: Any) -> tuple[str, str]:
    ref = object_ref(obj)
    return (ref.namespace, ref.name) if ref is not None else ("", "")


class _EmptyStore:
    def list(self) -> Sequence[Any]:
        return []

    def fetch(self, *keys: str) -> Sequence[Any]:
        return []

    def get_single(self, *keys: str) -> Any:
        return None

    def __len__(self) -> int:
        return 0


EMPTY_STORE: StoreLike = _EmptyStore()


@dataclass(frozen=True)
class StorageDirs:
    """Where HAProxy pods keep auxiliary files (``spec.dataplane`` dirs)."""

    maps_dir: str = "/etc/haproxy/maps"
    ssl_certs_dir: str = "/etc/haproxy/ssl"
    general_storage_dir: str = "/etc/haproxy/general"
    config_file: str = "/etc/haproxy/haproxy.cfg"

    @property
    def base_dir(self) -> str:
        return posixpath.dirname(self.maps_dir.rstrip("/")) or "/"

    def dir_for(self, kind: str) -> str:
        if kind == "map":
            return self.maps_dir
        if kind == "cert":
            return self.ssl_certs_dir
        if kind in ("file", "crt-list"):
            return self.general_storage_dir
        raise ValueError(f"unknown file kind {kind!r} (expected one of {', '.join(FILE_KINDS)})")

    @classmethod
    def from_spec(cls, dataplane: Any) -> StorageDirs:
        """Reads the dirs from a ``DataplaneSettings``-like object (missing attributes keep defaults)."""
        if dataplane is None:
            return cls()
        defaults = cls()
        return cls(
            **{
                name: getattr(dataplane, name, None) or getattr(defaults, name)
                for name in ("maps_dir", "ssl_certs_dir", "general_storage_dir", "config_file")
            }
        )


def sanitize_filename(filename: str) -> str:
    """Keeps the extension, replaces anything outside ``[A-Za-z0-9_-]`` in the stem by ``_``."""
    stem, dot, ext = filename.rpartition(".")
    if not dot:
        stem, ext = filename, ""
    clean = _UNSAFE_FILENAME.sub("_", stem) or "_"
    return f"{clean}.{_UNSAFE_FILENAME.sub('_', ext)}" if dot else clean


class PathResolver:
    """``get_path(name, kind)`` → the path HAProxy uses, relative to ``base_dir`` when possible.

    Relative paths work with ``default-path origin {{ pathResolver.base_dir() }}`` in ``global``,
    which is also what lets validation relocate every file into a temporary directory.
    """

    def __init__(self, dirs: StorageDirs) -> None:
        self._dirs = dirs

    def base_dir(self) -> str:
        fragments.note_read("paths", "base_dir", (), self._dirs.base_dir)
        return self._dirs.base_dir

    def get_path(self, filename: str, kind: str = "map") -> str:
        path = self._get_path(filename, kind)
        fragments.note_read("paths", "get_path", (filename, kind), path)
        return path

    def _get_path(self, filename: str, kind: str) -> str:
        directory = self._dirs.dir_for(kind).rstrip("/")
        name = sanitize_filename(filename) if kind in ("cert", "crt-list") else posixpath.basename(filename)
        if posixpath.dirname(directory) == self._dirs.base_dir:
            directory = posixpath.basename(directory)
        return f"{directory}/{name}" if filename else directory


class FileRegistry:
    """Files created by templates at render time (``fileRegistry.register(kind, name, content)``)."""

    def __init__(self, resolver: PathResolver) -> None:
        self._resolver = resolver
        self.files: dict[str, dict[str, str]] = {kind: {} for kind in FILE_KINDS}

    def register(self, kind: str, filename: str, content: str) -> str:
        if kind not in FILE_KINDS:
            raise TemplateFailure(f"fileRegistry.register: unknown kind {kind!r}")
        name = sanitize_filename(filename) if kind in ("cert", "crt-list") else filename
        if not name or "/" in name or name.startswith("."):
            raise TemplateFailure(f"fileRegistry.register: bad filename {filename!r}")
        existing = self.files[kind].get(name)
        if existing is not None and existing != content:
            raise TemplateFailure(f"fileRegistry.register: {kind} {name!r} registered twice with different content")
        self.files[kind][name] = str(content)
        fragments.note(fragments.EFFECT, "registry", "register", (kind, filename, content))
        return self._resolver._get_path(name, kind)


_NO_MARKS: Mapping[Any, None] = {}


class LoggedWrite:
    """A ``shared.set``/``setdefault`` in a ``SharedState`` log (appends are logged as their values)."""

    __slots__ = ("method", "value")

    def __init__(self, method: str, value: Any) -> None:
        self.method, self.value = method, value


class SharedState:
    """Values shared between templates of one render (``shared.get``/``set``/``setdefault``).

    Every write is logged per key (``log``, in order), which lets a fragment loop tell in one comparison
    that a key its items read holds what it held at the last render (``fragment_loops``)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._marks: dict[str, dict[Any, None]] = {}
        #: ("v", key) -> each value appended, or ``LoggedWrite`` for a set; ("m", key) -> each member marked (no tuple
        #: per write: 10,000 appends would leave 10,000 young objects for the collector after each render)
        self._log: dict[tuple[str, str], list[Any]] = {}
        #: keys whose list ``append``/``extend`` made: a list ``set`` from elsewhere (a memoized answer, a value
        #: another render or caller also holds) is copied before its first change, never changed in place
        self._owned: set[str] = set()
        #: keys written only by appends, from no value: their list is their log (no second list of 10,000 routes)
        self._appended: set[str] = set()

    def _own_list(self, key: str) -> Any:
        values = self._values.get(key)
        if key in self._owned:
            return values
        values = self._values[key] = [] if values is None else list(values) if isinstance(values, list) else values
        self._owned.add(key)
        return values

    def _logged(self, name: tuple[str, str]) -> list[Any]:
        if name[0] == "v" and name[1] in self._appended:  # written otherwise now: its log of its own from here
            self._appended.discard(name[1])
            self._log[name] = list(self._values[name[1]])
        log = self._log.get(name)
        if log is None:
            log = self._log[name] = []
        return log

    def _appending(self, key: str) -> list[Any]:
        """The list under ``key`` for an append, logged as such (see ``_appended``)."""
        if key in self._appended:
            values: list[Any] = self._values[key]
            return values
        if key not in self._values and ("v", key) not in self._log:
            self._appended.add(key)
            values = self._values[key] = []
            self._owned.add(key)
            return values
        values = self._own_list(key)
        return values

    def log(self, name: tuple[str, str]) -> Sequence[Any]:
        """The writes of ``name`` so far in this render (("v", key): values, ("m", key): marks)."""
        if name[0] == "v" and name[1] in self._appended:
            appended: Sequence[Any] = self._values[name[1]]
            return appended
        return self._log.get(name, ())

    def log_lengths(self) -> dict[tuple[str, str], int]:
        lengths = {name: len(log) for name, log in self._log.items()}
        for key in self._appended:
            lengths[("v", key)] = len(self._values[key])
        return lengths

    def get(self, key: str, default: Any = None) -> Any:
        result = self._values.get(key, default)
        fragments.note_read("shared", "get", (key, default), result, self.holds)
        return result

    def holds(self, value: Any) -> bool:
        """Whether ``value`` stays as it is for good: not a list ``append`` grows (a value ``set`` is copied before
        its first append, and templates change nothing; neither do the helpers whose answers they set)."""
        owned = self._owned
        return not owned or all(self._values.get(key) is not value for key in owned)

    def set(self, key: str, value: Any) -> str:
        log = self._logged(("v", key))  # first: an appended key's log is its list as it is before this write
        self._values[key] = value
        self._owned.discard(key)
        log.append(LoggedWrite("set", value))
        fragments.note(fragments.EFFECT, "shared", "set", (key, value))
        return ""

    def setdefault(self, key: str, value: Any) -> Any:
        fragments.uncacheable()  # a read and a write in one
        self._logged(("v", key)).append(LoggedWrite("setdefault", value))
        return self._values.setdefault(key, value)

    def has(self, key: str) -> bool:
        fragments.note_read("shared", "has", (key,), key in self._values)
        return key in self._values

    def append(self, key: str, value: Any) -> str:
        """Appends to the list under ``key`` (O(1); templates cannot mutate lists themselves)."""
        values = self._appending(key)
        values.append(value)
        if key not in self._appended:
            self._logged(("v", key)).append(value)
        fragments.note(fragments.EFFECT, "shared", "append", (key, value))
        return ""

    def extend(self, key: str, values: Sequence[Any]) -> None:
        """``append`` of each value in turn, at once (a fragment loop's reused items; journals nothing)."""
        self._appending(key).extend(values)
        if key not in self._appended:
            self._logged(("v", key)).extend(values)

    def mark(self, key: str, member: Any) -> str:
        """Adds ``member`` to the set under ``key``; ``marked`` tests membership in O(1)."""
        self._marks.setdefault(key, {})[member] = None
        self._logged(("m", key)).append(member)
        fragments.note(fragments.EFFECT, "shared", "mark", (key, member))
        return ""

    def mark_all(self, key: str, members: Sequence[Any]) -> None:
        """``mark`` of each member in turn, at once (journals nothing)."""
        self._marks.setdefault(key, {}).update(dict.fromkeys(members))
        self._logged(("m", key)).extend(members)

    def marked(self, key: str, member: Any) -> bool:
        result = member in self._marks.get(key, _NO_MARKS)
        fragments.note_read("shared", "marked", (key, member), result)
        return result

    def snapshot(self) -> dict[str, Any]:
        """A copy of the plain values (for ``jsonpath`` assertions and debugging)."""
        return dict(self._values)


class Endpoint(NamedTuple):
    """A ready endpoint of a Service port. A tuple: hashed and compared at C speed (the slot memo compares the
    endpoints of every backend, the slot assignment looks them up)."""

    address: str
    port: int


class ServerSlot(NamedTuple):
    """One reserved server slot. ``spec`` is ``SRV_n address:port`` or ``SRV_n 127.0.0.1:1 disabled`` (see
    ``server_slot``). A tuple: a startup fills tens of thousands, each built by one C call."""

    name: str
    address: str
    port: int
    enabled: bool
    spec: str


def server_slot(name: str, address: str, port: int, enabled: bool) -> ServerSlot:
    """The slot with its ``spec`` line."""
    return ServerSlot(name, address, port, enabled, f"{name} {address}:{port}" + ("" if enabled else " disabled"))


_new_tuple = tuple.__new__


def _endpoint(address: str, port: int) -> Endpoint:
    """``Endpoint(address, port)`` without the named tuple's Python-level ``__new__``."""
    endpoint: Endpoint = _new_tuple(Endpoint, (address, port))
    return endpoint


def _filled(name: str, address: str, port: int) -> ServerSlot:
    """``server_slot(name, address, port, True)`` in one C call."""
    slot: ServerSlot = _new_tuple(ServerSlot, (name, address, port, True, f"{name} {address}:{port}"))
    return slot


_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
#: a canonical dotted-decimal IPv4 address (what EndpointSlices hold): parsed without a loop over its parts
_DOTTED = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")


@lru_cache(maxsize=65536)
def _parse_ip(address: str) -> tuple[str, tuple[int, int]] | None:
    """Normalized address and sort key, or None when ``address`` is not an IP (cached: slices repeat)."""
    if type(address) is str and _DOTTED.fullmatch(address):
        return address, (4, int.from_bytes(inet_aton(address), "big"))
    parts = address.split(".") if type(address) is str else ()
    if len(parts) == 4 and address.isascii() and "".join(parts).isdigit():
        # four all-digit parts that are not a canonical address (a leading zero, an octet above 255): no address,
        # as ipaddress says, without its cost
        return None
    try:
        ip = ipaddress.ip_address(address)
    except (ValueError, TypeError):
        return None
    return str(ip), (ip.version, int(ip))


_SECOND = itemgetter(1)


def service_endpoints(service: Any, port_ref: Any, slices: Iterable[Any]) -> list[Endpoint]:
    """Ready endpoints of ``service`` for the service port ``port_ref`` (``{number}``/``{name}``/int/str).

    The Service port resolves the EndpointSlice port by name; addresses that are not IPs are dropped,
    so hostile EndpointSlice content never reaches a ``server`` line.
    """
    # the exact types first: store objects are dicts, and the ABC checks cost more than the rest of a lookup
    if type(service) is not dict and not isinstance(service, Mapping):
        return []
    if type(port_ref) is dict or isinstance(port_ref, Mapping):
        number, name = port_ref.get("number"), port_ref.get("name")
    elif isinstance(port_ref, int):
        number, name = port_ref, None
    else:
        number, name = None, str(port_ref)
    service_port = None
    for candidate in (service.get("spec") or {}).get("ports") or []:
        if (number is not None and candidate.get("port") == number) or (name and candidate.get("name") == name):
            service_port = candidate
            break
    if service_port is None:
        return []
    port_name = service_port.get("name") or ""
    dotted_v4: list[Endpoint] = []  # canonical IPv4 endpoints (what EndpointSlices hold), repeats included
    other: dict[Endpoint, tuple[int, int, int]] = {}  # any other address's endpoint -> its sort key
    dotted = _DOTTED.fullmatch
    for eps in slices:
        target = None
        for slice_port in eps.get("ports") or []:
            if (slice_port.get("name") or "") == port_name:
                target = slice_port.get("port")
                break
        if not isinstance(target, int) or not 0 < target < 65536:
            continue
        for endpoint in eps.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            for address in endpoint.get("addresses") or []:
                if type(address) is str and dotted(address):  # ``_parse_ip``'s first case, inline
                    dotted_v4.append(_new_tuple(Endpoint, (address, target)))
                    continue
                parsed = _parse_ip(address) if isinstance(address, str) else None
                if parsed is not None:
                    other.setdefault(_endpoint(parsed[0], target), (*parsed[1], target))
    # each endpoint once, by address then port (endpoints differ in their sort keys: the order is the keys')
    found = list(dict.fromkeys(dotted_v4))
    if not other:
        if len(found) > 1:
            found.sort(key=_v4_order)  # 4 bytes big-endian: the order of the addresses' numbers
        return found
    other.update((e, (4, int.from_bytes(inet_aton(e.address), "big"), e.port)) for e in found if e not in other)
    return [endpoint for endpoint, _ in sorted(other.items(), key=_SECOND)]


def _v4_order(endpoint: Endpoint) -> tuple[bytes, int]:
    return inet_aton(endpoint.address), endpoint.port


#: (the deployed backend it was assigned against, endpoints, step, compacted, slots, deployed slot count)
SlotEntry = tuple[CurrentBackend | None, tuple[Endpoint, ...], int, bool, tuple[ServerSlot, ...], int]


class SlotMemo:
    """backend -> ``SlotEntry``: one render's slot assignments, its own entries (``own``) over the table it carried
    from the last render (``base``, see ``carry``).

    Carrying shares the last render's table instead of copying it (a copy of 10,000 entries is a few ms of an
    endpoint change): the last memo's own entries are merged into the table both read, where its own entries
    already hide the same keys, so its answers stay as they were. Older memos sharing the table may then answer
    with newer entries; every entry is checked against its inputs before use (``ServerSlots.assign``), and an
    assignment is a function of those inputs, so no answer changes by it."""

    __slots__ = ("base", "own")

    def __init__(self, own: dict[str, SlotEntry] | None = None) -> None:
        self.own: dict[str, SlotEntry] = own if own is not None else {}
        self.base: dict[str, SlotEntry] | None = None

    def get(self, backend: str, default: Any = None) -> Any:
        hit = self.own.get(backend)
        if hit is not None:
            return hit
        return self.base.get(backend, default) if self.base is not None else default

    def __getitem__(self, backend: str) -> SlotEntry:
        hit = self.get(backend)
        if hit is None:
            raise KeyError(backend)
        entry: SlotEntry = hit
        return entry

    def __setitem__(self, backend: str, entry: SlotEntry) -> None:
        self.own[backend] = entry

    def entries(self, backends: Sequence[str], default: Any) -> Iterator[Any]:
        """``get`` of each of ``backends`` (at C speed where one table answers)."""
        own, base = self.own, self.base
        if base is None:
            return map(own.get, backends, repeat(default))
        if not own:
            return map(base.get, backends, repeat(default))
        return (own.get(b) or base.get(b, default) for b in backends)

    def carry(self, previous: SlotMemo) -> None:
        """Every entry of ``previous`` under this memo's own."""
        table = previous.base
        if table is None:
            table = previous.base = previous.own  # its own table, read first anyway, becomes the shared one
        elif previous.own is not table:
            table.update(previous.own)
        self.base = table


#: (port reference, service id, slice ids...) -> (service, slices, endpoints)
EndpointAnswers = dict[tuple[Any, ...], tuple[Any, tuple[Any, ...], tuple[Endpoint, ...]]]

_PLAIN_PORT = (int, type(None))
_PLAIN_NAME = (str, type(None))


class EndpointsMemo:
    """``service_endpoints`` with the answers of the previous render reused for the same objects.

    Store objects are replaced, never mutated, on change: the same Service and EndpointSlice objects
    (checked by identity; entries hold them, so ids cannot be recycled) and the same port reference
    give the same endpoints. ``next_render()`` drops what the last render did not ask for.
    """

    def __init__(self, answers: EndpointAnswers | None = None) -> None:
        #: ``answers``: another memo's (``answers()``), read only: entries are checked before use
        self._previous: EndpointAnswers = answers if answers is not None else {}
        self._current: EndpointAnswers = {}

    def next_render(self) -> None:
        # a new memo's first render keeps the answers it was given (and one after a render that asked nothing)
        if self._current:
            self._previous = self._current
        self._current = {}  # always a fresh dict: the last one may have been handed on (``answers``)

    def answers(self) -> EndpointAnswers:
        """What the last render asked (never written again: the next render writes a dict of its own)."""
        return self._current

    def __call__(self, service: Any, port_ref: Any, slices: Iterable[Any]) -> list[Endpoint]:
        return list(self.answer(service, port_ref, slices))

    def answer(self, service: Any, port_ref: Any, slices: Iterable[Any]) -> tuple[Endpoint, ...]:
        """``service_endpoints`` as the memo keeps it (a tuple, not copied: for Python helpers)."""
        group = slices if type(slices) is tuple else tuple(slices)
        if type(port_ref) is dict or isinstance(port_ref, Mapping):  # the exact type first: the ABC check is slow
            number, name = port_ref.get("number"), port_ref.get("name")
            if type(number) in _PLAIN_PORT and type(name) in _PLAIN_NAME:
                # the common reference as it is (an int or None, a text or None: equal only to the same reference)
                kind: str = "port"
            else:
                kind, number, name = "map", repr(number), repr(name)
        else:
            kind, number, name = type(port_ref).__name__, repr(port_ref), None
        # one flat tuple (hashed once per lookup, no inner tuples): the port reference, then the objects' ids (most
        # Services have one slice: built at once, without unpacking a map)
        key = (kind, number, name, id(service), id(group[0])) if len(group) == 1 else (
            kind, number, name, id(service), *map(id, group))
        hit = self._current.get(key) or self._previous.get(key)
        if hit is not None and hit[0] is service and same_items(hit[1], group):
            result = hit[2]
        else:
            result = tuple(service_endpoints(service, port_ref, group))
        self._current[key] = (service, group, result)
        return result


#: how long a backend's endpoints must have fit in a quarter of its server slots before a reload that
#: happens anyway gives the surplus back (an autoscaled Service that shrinks for less will grow again)
SLOT_SHRINK_QUIET = 900.0


_MISSING: Any = object()

#: changes a ``QuietTimes`` carries over its shared table before it copies the table whole (at least; else a sixteenth
#: of the table)
_QUIET_OVERLAY = 64


class QuietTimes(Mapping[str, float]):
    """backend -> since when its endpoints have fit in a quarter of its slots (``ServerSlots.low_since``).

    One render's changes (``own`` written, ``gone`` taken out) over a table shared with the renders before it
    (``base``): a render that takes the last render's times whole (a reused fragment loop, see
    ``ServerSlots.carry``) starts from them without copying 10,000 entries, a copy being a write to each entry's
    objects' reference counts (~2 ms per change); the changes of a run of renders are carried along until they are a
    sixteenth of the table, then the table is copied once. Written only during its render: once a later render
    shares its tables, nothing changes them."""

    __slots__ = ("_base", "_gone", "_own", "_size")

    def __init__(self) -> None:
        self._base: Mapping[str, float] = {}
        self._own: dict[str, float] = {}
        self._gone: set[str] = set()
        self._size = 0

    @classmethod
    def following(cls, before: Mapping[str, float]) -> QuietTimes:
        """A new one holding what ``before`` (a finished render's) holds."""
        times = cls()
        if not isinstance(before, QuietTimes):
            times._base, times._size = before, len(before)
        elif not before._base and not before._gone:
            times._base, times._size = before._own, before._size
        elif len(before._own) + len(before._gone) <= max(_QUIET_OVERLAY, before._size >> 4):
            times._base, times._size = before._base, before._size
            times._own, times._gone = dict(before._own), set(before._gone)
        else:
            times._base, times._size = dict(before.items()), before._size
        return times

    def get(self, backend: str, default: Any = None) -> Any:
        since = self._own.get(backend)
        if since is not None:
            return since
        if self._gone and backend in self._gone:
            return default
        return self._base.get(backend, default)

    def __getitem__(self, backend: str) -> float:
        since = self.get(backend, _MISSING)
        if since is _MISSING:
            raise KeyError(backend)
        found: float = since
        return found

    def __contains__(self, backend: object) -> bool:
        return isinstance(backend, str) and self.get(backend, _MISSING) is not _MISSING

    def __setitem__(self, backend: str, since: float) -> None:
        if backend not in self._own:
            if backend in self._gone:
                self._gone.discard(backend)
                self._size += 1
            elif backend not in self._base:
                self._size += 1
        self._own[backend] = since

    def update(self, pairs: Iterable[tuple[str, float]]) -> None:
        if not self._base and not self._gone:  # a table of its own: at C speed
            self._own.update(pairs)
            self._size = len(self._own)
            return
        for backend, since in pairs:
            self[backend] = since

    def pop(self, backend: str, default: Any = None) -> Any:
        since = self.get(backend, _MISSING)
        if since is _MISSING:
            return default
        self._own.pop(backend, None)
        if backend in self._base:
            self._gone.add(backend)
        self._size -= 1
        return since

    def __iter__(self) -> Iterator[str]:
        own, gone = self._own, self._gone
        yield from own
        for backend in self._base:
            if backend not in own and backend not in gone:
                yield backend

    def __len__(self) -> int:
        return self._size


class ServerSlots:
    """Assigns endpoints to ``SRV_n`` server slots, keeping each endpoint in its deployed slot.

    Keeping slots stable is what lets the synchronizer change only addresses/states through the
    runtime API: an endpoint that stays keeps its ``SRV_n``, newcomers take the lowest free slots.
    The slot count has hysteresis, because changing it is a reload: it grows ahead of need (to twice
    the deployed count, in steps of ``slots``, so a backend that keeps growing reloads a logarithmic
    number of times) and never shrinks by itself. A backend whose endpoints fit in a quarter of its
    slots for ``SLOT_SHRINK_QUIET`` seconds (``low_since`` remembers since when, across renders) is
    ``shrinkable``; only a ``compact`` render (one whose config reloads anyway, see
    ``render_and_validate``) gives its surplus back.
    """

    def __init__(self, current: CurrentConfig | None, memo: SlotMemo | None = None, *, compact: bool = False,
                 now: float | None = None, low_since: Mapping[str, float] | None = None) -> None:
        self._current = current
        self._compact = compact
        self._now = now
        self._low_since_before: Mapping[str, float] = low_since if low_since is not None else {}
        # The assignments of the previous render (read) and of this one (written): an unchanged backend
        # with unchanged endpoints gets the same slots without redoing the assignment.
        self._previous_memo: SlotMemo = memo if memo is not None else SlotMemo()
        self.memo: SlotMemo = SlotMemo()
        self.low_since = QuietTimes()
        self.shrinkable = False
        self._carried = False  # the memo holds every entry of the last one (see ``carry``)
        self._lows_lent = False  # ``low_since`` holds every quiet time of the last render (see ``carry``)

    def assign(self, backend: str, endpoints: Sequence[Endpoint], slots: Any = 10,
               shrink_after: Any = None) -> list[ServerSlot]:
        """``slots`` per step; ``shrink_after``: the quiet period in seconds (None or undefined: the default)."""
        if type(slots) is int:
            step = slots
        else:
            try:
                step = int(slots)
            except (TypeError, ValueError):
                step = 0
        if not 1 <= step <= 1000:
            raise TemplateFailure(f"server slots must be an integer from 1 to 1000, got {slots!r}")
        previous = self._current.backends.get(backend) if self._current is not None else None
        hit = self._previous_memo.get(backend)
        # counting the deployed slots is a scan of the backend's servers: once per deployed backend object
        deployed = hit[5] if hit is not None and hit[0] is previous else deployed_slots(previous)
        # without a clock nothing is ever low (``_quiet_long_enough``): the quiet period is not even read
        shrinkable = self._now is not None and self._quiet_long_enough(backend, len(endpoints), deployed,
                                                                         _quiet_period(shrink_after))
        compact = self._compact and shrinkable
        key = tuple(endpoints)
        # The deployed backend is compared by identity (the current-config reader reuses unchanged ones;
        # the memo holds it, so the identity cannot be recycled), endpoints and step by value.
        if hit is not None and hit[0] is previous and (hit[1] is key or hit[1] == key) and hit[2] == step \
                and hit[3] == compact:
            result = hit[4]
        else:
            count = slot_count(len(endpoints), step, deployed, compact=compact)
            result = self._assign(previous, key, count)
        self.memo[backend] = (previous, key, step, compact, result, deployed)
        self.shrinkable = self.shrinkable or (shrinkable and not compact)
        # journalled with the memo's own tuples: a fragment cache of 10,000 backends holds no copies
        fragments.note(fragments.CHECKED, "slots", "assign", (backend, key, slots, shrink_after), result)
        return list(result)

    # -- a fragment loop's reused items, at once (see ``fragment_loops``) ------------------------------

    @property
    def now(self) -> float | None:
        return self._now

    def follows(self, memo: SlotMemo, low_since: Mapping[str, float]) -> bool:
        """Whether this render's memo and quiet times are those ``memo``/``low_since`` left (the render that wrote
        them completed, and nothing assigned in between), in a render that neither compacts nor changed whether
        it has a clock: then an ``assign`` answers as in that render when the backend's deployed object did."""
        return self._previous_memo is memo and self._low_since_before is low_since and not self._compact

    @property
    def deployed(self) -> CurrentConfig | None:
        return self._current

    def unchanged(self, backends: Sequence[str]) -> Iterable[bool]:
        """For each backend, whether its deployed object is the one its memo entry was assigned against."""
        deployed = self._current.backends if self._current is not None else {}
        entries = self._previous_memo.entries(backends, _NO_ENTRY)
        return map(is_, map(deployed.get, backends), map(_FIRST, entries))

    def carry(self, lows: Callable[[], Sequence[str]], every_low: int = -1) -> None:
        """What ``assign`` leaves behind for the backends of a stretch of a loop's items when it answers as in the
        last render (see ``unchanged``): the memo entries (the last memo whole), and since when ``lows()`` (those
        of the backends with few endpoints) have been low.

        ``every_low``: how many backends of the loop carrying were low in the last render, when no two of its
        items assign the same backend (else -1). When those were every low backend of the last render, the first
        carry takes its quiet times whole (one copy, not 10,000 inserts per change), those of the backends this
        render assigned so far as they left them; the loop then names the backends of its changed items
        (``settle_lows``), the only ones the copy may hold wrongly."""
        if not self._carried:
            # the last memo whole, under what this render assigned so far (``SlotMemo.carry``: shared, not copied;
            # entries of backends not assigned again stay: each is checked against its inputs before use)
            self.memo.carry(self._previous_memo)
            self._carried = True
            before = self._low_since_before
            if every_low > 0 and every_low == len(before):
                whole = QuietTimes.following(before)
                for backend in self.memo.own:
                    since = self.low_since.get(backend)
                    if since is None:
                        whole.pop(backend, None)
                    else:
                        whole[backend] = since
                self.low_since = whole
                self._lows_lent = True
        if not self._lows_lent:
            found = lows()
            if found:
                before = self._low_since_before
                self.low_since.update(zip(found, map(before.__getitem__, found), strict=True))

    def settle_lows(self, backends: Iterable[str]) -> None:
        """After a loop whose carry took the last quiet times whole: of ``backends`` (those its changed items
        assigned in the last render), only those ``assign`` found low in this render keep theirs."""
        if not self._lows_lent:
            return
        own, low_since = self.memo.own, self.low_since
        for backend in backends:
            entry = own.get(backend)
            if entry is None or self._now is None or not entry[5] or len(entry[1]) * 4 > entry[5]:
                low_since.pop(backend, None)

    def lows(self, calls: Iterable[tuple[Any, ...]]) -> list[tuple[str, float, float]]:
        """Of ``assign``'s journalled arguments made in this render, the backends with few endpoints, since when
        they have been so, and the quiet period after which they are ``shrinkable``."""
        return [(backend, since, quiet) for _, backend, since, quiet in self.lows_at((0, call) for call in calls)]

    def lows_at(self, calls: Iterable[tuple[int, tuple[Any, ...]]]) -> list[tuple[int, str, float, float]]:
        """``lows`` of (position, journalled arguments) pairs at once, each found one with its position."""
        if self._now is None:
            return []
        memo, low_since = self.memo, self.low_since
        found = []
        for position, (backend, endpoints, _, shrink_after) in calls:
            entry = memo.get(backend)
            since = low_since.get(backend)
            if entry is not None and since is not None and entry[5] and len(endpoints) * 4 <= entry[5]:
                found.append((position, backend, since, _quiet_period(shrink_after)))
        return found

    def note_low(self, since: float, quiet: float) -> bool:
        """An ``assign`` answered as in the last render, of a backend low since ``since``: as ``assign`` would,
        marks the render ``shrinkable`` after ``quiet`` seconds; whether it did."""
        if self._now is not None and self._now - since >= quiet and not self._compact:
            self.shrinkable = True
        return self.shrinkable

    def _quiet_long_enough(self, backend: str, endpoints: int, deployed: int, quiet: float) -> bool:
        """Whether ``backend``'s endpoints have fit in a quarter of its deployed slots for ``quiet`` seconds."""
        if self._now is None or deployed == 0 or endpoints * 4 > deployed:
            return False
        since = self._low_since_before.get(backend, self._now)
        self.low_since[backend] = since
        return self._now - since >= quiet

    @staticmethod
    def _assign(previous: CurrentBackend | None, endpoints: tuple[Endpoint, ...], count: int) -> tuple[ServerSlot, ...]:
        names = _slot_names(count)
        if previous is None:
            # Nothing deployed yet: endpoints simply fill the first slots.
            # (``names`` holds at least ``count`` >= len(endpoints) names)
            filled = tuple([_filled(name, address, port) for name, (address, port) in zip(names, endpoints,
                                                                                          strict=False)])
            return filled + _placeholders(len(endpoints), count)
        by_slot: dict[int, Endpoint] = {}
        remaining = dict.fromkeys(endpoints)
        for server in previous.servers.values():
            if server.disabled or server.port is None or not server.name.startswith("SRV_"):
                continue
            index = server.name[4:]
            if not index.isdigit() or not 1 <= int(index) <= count:
                continue
            endpoint = _endpoint(server.address, server.port)
            if endpoint in remaining:
                by_slot[int(index)] = endpoint
                del remaining[endpoint]
        free = (i for i in range(1, count + 1) if i not in by_slot)
        for endpoint in remaining:
            by_slot[next(free)] = endpoint
        placeholders = _placeholders(0, count)
        result = []
        for i in range(1, count + 1):
            taken = by_slot.get(i)
            if taken is None:
                result.append(placeholders[i - 1])
            else:
                result.append(_filled(names[i - 1], taken.address, taken.port))
        return tuple(result)


_NAMES: list[str] = []
_PLACEHOLDERS: list[ServerSlot] = []


def _slot_names(count: int) -> list[str]:
    """``SRV_1`` to ``SRV_<count>`` (at least: the list only grows; built once per process)."""
    while len(_NAMES) < count:
        _NAMES.append(f"SRV_{len(_NAMES) + 1}")
    return _NAMES


def _placeholders(start: int, count: int) -> tuple[ServerSlot, ...]:
    """The disabled stand-ins of slots ``start + 1`` to ``count`` (identical across backends, so shared)."""
    while len(_PLACEHOLDERS) < count:
        _PLACEHOLDERS.append(server_slot(f"SRV_{len(_PLACEHOLDERS) + 1}", "127.0.0.1", 1, False))
    return tuple(_PLACEHOLDERS[start:count])


_NO_ENTRY = (object(),)
_FIRST = itemgetter(0)


def _quiet_period(value: Any) -> float:
    if value is None or isinstance(value, Undefined):
        return SLOT_SHRINK_QUIET
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not 0 <= seconds <= 7 * 86400:
        raise TemplateFailure(f"the slot shrink quiet period must be seconds from 0 to 604800, got {value!r}")
    return seconds


def deployed_slots(backend: CurrentBackend | None) -> int:
    """How many ``SRV_n`` slots the deployed backend has (its highest ``n``; 0 when not deployed)."""
    if backend is None:
        return 0
    indices = [int(name[4:]) for name in backend.servers if name.startswith("SRV_") and name[4:].isdigit()]
    return max(indices, default=0)


def slot_count(endpoints: int, step: int, deployed: int, *, compact: bool = False) -> int:
    """The slot count for ``endpoints`` given the ``deployed`` one.

    ``needed`` is the smallest multiple of ``step`` (at least ``step``) that holds every endpoint. Not
    deployed yet: ``needed``. Within the deployed count: the deployed count (a shrink is a reload
    nobody asked for), or ``needed`` when compacting. Beyond it: at least twice the deployed count.
    """
    needed = max(step, math.ceil(endpoints / step) * step)
    if deployed <= 0:
        return needed
    if needed <= deployed:
        return needed if compact else deployed
    return max(needed, math.ceil(2 * deployed / step) * step)


CURRENT_RENDER: ContextVar[RenderState | None] = ContextVar("haptic_current_render", default=None)


def current_render() -> RenderState:
    """The state of the render pass running in this thread/task (set by ``TemplateEngine.render``)."""
    state = CURRENT_RENDER.get()
    if state is None:
        raise TemplateFailure("this function can only be used while rendering")
    return state


_V = TypeVar("_V")


class IdentityMemo(Generic[_V]):
    """Answers computed from some objects, kept by the identity of those objects for this render and the last
    (the render state of ``current_render()`` tells them apart). Store objects are replaced, never mutated, on
    change, and templates cannot change what they are given: the same objects give the same answer. An entry
    holds its objects, so no id is reused while it is kept."""

    def __init__(self) -> None:
        self._render: Any = None
        # keys: the objects' ids (a tuple), or one object's id (an int: ``get_one``)
        self._current: dict[Hashable, tuple[tuple[Any, ...], _V]] = {}
        self._previous: dict[Hashable, tuple[tuple[Any, ...], _V]] = {}

    def _rotate(self, render: Any) -> None:
        if render is not self._render:
            self._render = render
            self._previous, self._current = self._current, {}

    def get(self, *objects: Any) -> _V | None:
        """The answer kept for exactly these objects (kept on for the next render), or None."""
        self._rotate(current_render())
        key = tuple(map(id, objects))
        hit = self._current.get(key) or self._previous.get(key)
        if hit is None or not same_items(hit[0], objects):
            return None
        self._current[key] = hit
        return hit[1]

    def put(self, value: _V, *objects: Any) -> _V:
        """Keeps ``value`` as the answer for these objects (after a ``get`` of them in this render)."""
        self._current[tuple(map(id, objects))] = (objects, value)
        return value

    def get_one(self, render: Any, obj: Any) -> _V | None:
        """``get`` of one object, its render given (asked once per Ingress of a render: no key tuple each)."""
        self._rotate(render)
        key = id(obj)
        hit = self._current.get(key) or self._previous.get(key)
        if hit is None or hit[0][0] is not obj:
            return None
        self._current[key] = hit
        return hit[1]

    def put_one(self, obj: Any, value: _V) -> _V:
        """``put`` for ``get_one``."""
        self._current[id(obj)] = ((obj,), value)
        return value


@dataclass
class RenderState:
    """Per-render bookkeeping behind ``first_seen``, ``warn`` and ``exclude``, and the render's wall time
    (``now()``)."""

    wall_time: float | None = None
    seen: SeenKeys = field(default_factory=SeenKeys)
    warnings: dict[str, None] = field(default_factory=dict)
    notices: dict[tuple[Any, ...], ObjectNotice] = field(default_factory=dict)
    #: (kind, namespace, name) of every object the templates must leave out of this render
    #: (set before the render by the caller: per-object isolation re-renders without them).
    skip: frozenset[tuple[str, str, str]] = frozenset()
    #: the versions rendered in place of some skipped objects (``RenderInputs.previous``)
    previous: Mapping[tuple[str, str, str], Any] = field(default_factory=dict)
    #: (kind, namespace, name) -> the ``statuses.ObjectStatus`` templates declared (written only through
    #: ``declare_status``/``declare_statuses``, which keep ``statuses_from``)
    statuses: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    #: the one dict ``statuses`` holds exactly, when a single ``declare_statuses`` filled it: a render declaring the
    #: very same dict as the last declares the same statuses, without comparing 10,000 (the engine's sort)
    statuses_from: Any = None

    def declare_status(self, key: tuple[str, str, str], status: Any) -> None:
        if self.statuses_from is not None:  # ``statuses`` is that dict itself: copied before its first change
            self.statuses = dict(self.statuses)
        self.statuses[key] = status
        self.statuses_from = None

    def declare_statuses(self, declared: dict[tuple[str, str, str], Any]) -> None:
        """Every status of ``declared`` (as one ``declare_status`` per key would: the last status of a key wins, in
        the place of its first). ``declared`` must not change afterwards: the next render knows it by identity, and
        a render declaring nothing else holds it as its ``statuses`` (no copy of 10,000 per render)."""
        if not self.statuses:
            self.statuses = declared
            self.statuses_from = declared
            return
        if self.statuses_from is not None:
            self.statuses = dict(self.statuses)
        self.statuses.update(declared)
        self.statuses_from = None

    def first_seen(self, key: tuple[str, ...]) -> bool:
        seen = self.seen
        fresh = key not in seen.own and (not seen.runs or key not in seen)
        if fresh:
            seen.own[key] = None
        fragments.note(fragments.CLAIM, "state", "first_seen", (key,), fresh)
        return fresh

    def warn(self, message: str) -> None:
        self.warnings[message] = None
        fragments.note(fragments.EFFECT, "state", "warn", (message,))

    def notice(self, notice: ObjectNotice, text: str | None = None) -> None:
        """Records a notice about one object; ``text`` (default: its one-line form) is a render warning too."""
        self.notices.setdefault(notice.key, notice)
        self.warnings[notice.text() if text is None else text] = None
        fragments.note(fragments.EFFECT, "state", "notice", (notice, text))

    def is_skipped(self, key: tuple[str, str, str], obj: Any) -> bool:
        result = key in self.skip and self.previous.get(key) is not obj
        fragments.note_read("state", "is_skipped", (key, obj), result)
        return result
