"""``ResourceStore``: the objects of one watched resource, indexed by its ``indexBy`` JSONPath keys.

* The index is composite: ``indexBy: [metadata.namespace, metadata.name]`` gives every object the
  key ``(namespace, name)``; ``fetch("default")`` is a prefix lookup, ``fetch("default", "web")`` an
  exact one, ``fetch()`` lists everything.
* A key expression with several matches (``spec.rules[*].host``) indexes the object under each
  value; a key expression with no match indexes it under ``""``. Values are text as Go's
  ``fmt.Sprint`` gives them (``80``, ``true``).
* The client-side field selector (``spec.ingressClassName=haproxy``) is applied on ``apply``: an
  object that does not match is not stored, and a stored one that stops matching is removed.
* ``ignore_fields`` are stripped before storing (the caller's object is never mutated).
* Objects are identified by ``(metadata.namespace, metadata.name)``; every answer is sorted by that
  identity so that rendering never depends on watch-event order.

The store keeps (a stripped, structurally shared view of) the objects it is given and hands them
out without copying: callers must treat both as read-only. Not thread-safe; one event loop owns it.

Every write also logs the index prefixes it touched (``change_mark``/``changed_since``): a reader that
remembers a mark learns which lookups may answer differently since, without comparing any answer (the
template engine's fragment cache checks only those).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from haptic.k8s.errors import AmbiguousLookupError as AmbiguousLookupError
from haptic.k8s.errors import StoreError as StoreError
from haptic.k8s.jsonpath import JSONPath, compile_jsonpath, format_value
from haptic.k8s.selectors import FieldSelector, parse_field_selector

Identity = tuple[str, str]
IndexKey = tuple[str, ...]
Objects = list[Mapping[str, Any]]
"""A list of stored objects (named so that annotations are not shadowed by ``ResourceStore.list``)."""
Found = tuple[Mapping[str, Any], ...]
"""A lookup's answer as the store keeps it (``ResourceStore.lookup``)."""


class _Entry:
    __slots__ = ("obj", "prefixes")

    def __init__(self, obj: Mapping[str, Any], prefixes: tuple[IndexKey, ...]) -> None:
        self.obj = obj
        self.prefixes = prefixes


def identity_of(obj: Mapping[str, Any]) -> Identity:
    """``(namespace, name)`` of an object; the namespace is ``""`` for cluster-scoped objects."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        raise StoreError("object has no metadata.name")
    return str(metadata.get("namespace") or ""), str(metadata["name"])


def single_match(store: str, keys: Sequence[Any], found: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The one object of a lookup; ``None`` for none; ``AmbiguousLookupError`` for several."""
    if not found:
        return None
    if len(found) > 1:
        raise AmbiguousLookupError(
            f"store {store!r}: {len(found)} objects match keys {list(keys)!r}; use fetch() for several"
        )
    return found[0]


class ResourceStore:
    """An indexed in-memory store for one watched resource type."""

    def __init__(
        self,
        name: str,
        index_by: Sequence[str],
        field_selector: str | None = None,
        ignore_fields: Iterable[str] = (),
    ) -> None:
        if not index_by:
            raise StoreError(f"store {name!r}: indexBy needs at least one JSONPath")
        self.name = name
        self.index_by = tuple(index_by)
        self._paths: tuple[JSONPath, ...] = tuple(compile_jsonpath(e) for e in self.index_by)
        self._selector: FieldSelector = parse_field_selector(field_selector)
        self._ignore: tuple[JSONPath, ...] = tuple(compile_jsonpath(e) for e in ignore_fields)
        for path in self._ignore:
            if not path.removable:
                raise StoreError(f"store {name!r}: ignore field {path.expression!r} cannot remove fields")
        self._entries: dict[Identity, _Entry] = {}
        self._buckets: dict[IndexKey, dict[Identity, Mapping[str, Any]]] = {}
        self._sorted: dict[IndexKey, Found] = {}
        self._new_log()

    def _new_log(self) -> None:
        # Append-only and shared with snapshots, each of which remembers how far it saw; replaced (a new
        # lineage: marks taken before answer None) when it grows past what the store holds many times over.
        self._log: list[IndexKey] = []
        self._log_end: int | None = None  # None: the live store, which sees the whole log

    def _logged(self, prefixes: Iterable[IndexKey]) -> None:
        if self._log_end is not None or len(self._log) > 8 * len(self._entries) + 4096:
            self._new_log()
        self._log.append(())
        self._log.extend(prefixes)

    def change_mark(self) -> tuple[object, int]:
        """Where the change log stands now (pass it to ``changed_since`` later)."""
        return self._log, len(self._log) if self._log_end is None else self._log_end

    def changed_since(self, mark: tuple[object, int] | None) -> frozenset[IndexKey] | None:
        """Every index prefix (``()`` for ``list()``) whose lookup may answer differently than at ``mark``: the
        prefixes of the objects written since, old and new versions. None when the log cannot tell (another
        store's mark, a log replaced since)."""
        if mark is None or mark[0] is not self._log:
            return None
        end = len(self._log) if self._log_end is None else self._log_end
        return frozenset(self._log[mark[1]:end])

    def unchanged_since(self, mark: tuple[object, int] | None) -> bool:
        """Whether nothing was written since ``mark`` (False when the log cannot tell)."""
        return self.changed_since(mark) == frozenset()

    def __repr__(self) -> str:
        return f"ResourceStore({self.name!r}, index_by={list(self.index_by)!r}, objects={len(self)})"

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.list())

    def __contains__(self, obj: object) -> bool:
        return isinstance(obj, Mapping) and identity_of(obj) in self._entries

    # --- writes -------------------------------------------------------------------------------

    def apply(self, obj: Mapping[str, Any]) -> bool:
        """Adds or updates ``obj``; returns whether the store changed.

        An object failing the field selector is not stored (and removed if it was).
        """
        ident = identity_of(obj)
        if not self._selector.matches(obj):
            return self._discard(ident)
        stored = self.prepare(obj)
        old = self._entries.get(ident)
        if old is not None and old.obj == stored:
            return False
        if old is not None:
            self._unlink(ident, old)
        entry = _Entry(stored, self._prefixes(stored))
        self._logged(entry.prefixes + (old.prefixes if old is not None else ()))
        self._entries[ident] = entry
        for prefix in entry.prefixes:
            self._buckets.setdefault(prefix, {})[ident] = stored
            self._sorted.pop(prefix, None)
        self._sorted.pop((), None)
        return True

    def remove(self, obj: Mapping[str, Any]) -> bool:
        """Removes the object with ``obj``'s namespace/name; returns whether it was stored."""
        return self._discard(identity_of(obj))

    def replace_all(self, objs: Iterable[Mapping[str, Any]]) -> bool:
        """Makes the store hold exactly ``objs`` (after a re-list); returns whether anything changed."""
        seen: set[Identity] = set()
        changed = False
        for obj in objs:
            seen.add(identity_of(obj))
            changed = self.apply(obj) or changed
        for ident in [i for i in self._entries if i not in seen]:
            changed = self._discard(ident) or changed
        return changed

    def clear(self) -> None:
        self._entries.clear()
        self._buckets.clear()
        self._sorted.clear()
        self._new_log()

    def prepare(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """``obj`` as the store keeps it: ignored fields stripped (structurally shared, not mutated)."""
        stored: Mapping[str, Any] = obj
        for path in self._ignore:
            stored = path.strip(stored)
        return stored

    def matches_selector(self, obj: Mapping[str, Any]) -> bool:
        return self._selector.matches(obj)

    def index_keys(self, obj: Mapping[str, Any]) -> list[IndexKey]:
        """Every full index key ``obj`` is stored under (several when a key expression has several matches)."""
        per_path: list[list[str]] = []
        for path in self._paths:
            values = list(dict.fromkeys(format_value(v) for v in path.find(obj)))
            per_path.append(values or [""])
        return [tuple(combo) for combo in itertools.product(*per_path)]

    def _prefixes(self, obj: Mapping[str, Any]) -> tuple[IndexKey, ...]:
        prefixes: dict[IndexKey, None] = {}
        for key in self.index_keys(obj):
            for i in range(1, len(key) + 1):
                prefixes[key[:i]] = None
        return tuple(prefixes)

    def _discard(self, ident: Identity) -> bool:
        entry = self._entries.pop(ident, None)
        if entry is None:
            return False
        self._unlink(ident, entry)
        self._sorted.pop((), None)
        self._logged(entry.prefixes)
        return True

    def _unlink(self, ident: Identity, entry: _Entry) -> None:
        for prefix in entry.prefixes:
            bucket = self._buckets.get(prefix)
            if bucket is None:
                continue
            bucket.pop(ident, None)
            if not bucket:
                del self._buckets[prefix]
            self._sorted.pop(prefix, None)

    def snapshot(self) -> ResourceStore:
        """A copy that later writes to this store do not change (objects shared: they are never mutated), for
        a render in another thread while the watchers keep applying events here."""
        copy = object.__new__(ResourceStore)
        copy.__dict__.update(self.__dict__)
        copy._entries = dict(self._entries)
        copy._buckets = {prefix: dict(bucket) for prefix, bucket in self._buckets.items()}
        # The cached sorted tuples are replaced, never changed: sharing them is safe.
        copy._sorted = dict(self._sorted)
        copy._log_end = self.change_mark()[1]
        return copy

    def listed_later(self) -> Callable[[], Found]:
        """``list()`` as it would answer now, worked out only when called (later writes change nothing): a copy of
        the entries now (no sort, no objects touched), the sorted tuple when asked."""
        entries = dict(self._entries)
        return lambda: tuple([entries[i].obj for i in sorted(entries)])

    # --- reads --------------------------------------------------------------------------------

    def list(self) -> Objects:
        """Every object, sorted by namespace then name."""
        return list(self.lookup())

    def fetch(self, *keys: Any) -> Objects:
        """Objects whose index key starts with ``keys`` (none: all), sorted by namespace then name."""
        return list(self.lookup(*keys))

    def lookup(self, *keys: Any) -> Found:
        """``fetch`` as the store keeps it: a tuple shared by every caller until a write replaces it (no copy: the
        renderer reads two lookups per Ingress)."""
        try:
            cached = self._sorted.get(keys)  # keys as the index holds them (text): the common case
        except TypeError:  # an unhashable key, made text below
            cached = None
        if cached is not None:
            return cached
        if not keys:
            cached = self._sorted[()] = tuple([self._entries[i].obj for i in sorted(self._entries)])
            return cached
        if len(keys) > len(self._paths):
            raise StoreError(
                f"store {self.name!r}: {len(keys)} keys given but indexBy has {len(self._paths)} "
                f"({', '.join(self.index_by)})"
            )
        prefix = keys
        for key in keys:
            if type(key) is not str:  # keys are text in the index; templates mostly pass text already
                prefix = tuple(format_value(k) for k in keys)
                break
        cached = self._sorted.get(prefix)
        if cached is None:
            bucket = self._buckets.get(prefix)
            if not bucket:
                return ()
            # most buckets of a (namespace, name) index hold one object: nothing to sort
            cached = tuple(bucket.values()) if len(bucket) == 1 else tuple([bucket[i] for i in sorted(bucket)])
            self._sorted[prefix] = cached
        return cached

    def get_single(self, *keys: Any) -> Mapping[str, Any] | None:
        """The one object under ``keys``; ``None`` when there is none; ``AmbiguousLookupError`` for several."""
        return single_match(self.name, keys, self.lookup(*keys))

    def get(self, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        """The object with this identity, whatever the index."""
        entry = self._entries.get((namespace or "", name))
        return entry.obj if entry is not None else None
