"""``WatchedObjects``: every watched object by (kind, namespace, name), merged from per-store parts only when
asked.

The coordinator takes this view of the stores for every render, and keeps one as the objects the last config that
validated rendered. Both are only read when ``haproxy -c`` rejects a render (to find the culprits) or while an
object is held back: merging 20,000 objects into one dict, and copying it, for every endpoint change cost more
than the change itself. Looking one object up asks the parts instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from haptic.core.overlays import overlaid

__all__ = ["KeyedObjects", "ObjectKey", "StorePart", "WatchedObjects"]

ObjectKey = tuple[str, str, str]

#: id of an object -> (the object, its key): store objects are replaced, never mutated, so a key is worked out once
KeyedObjects = dict[int, tuple[Mapping[str, Any], ObjectKey | None]]


class StorePart(Mapping[ObjectKey, Mapping[str, Any]]):
    """One store's objects by key as they were when taken (``listed()``: the store's ``list()`` then), keyed only
    when first asked: an EndpointSlice change need not key 1,000 slices for a view read only when ``haproxy -c``
    rejects a render. ``known``: the keys of an earlier part's objects, reused for the same objects."""

    def __init__(self, listed: Callable[[], Sequence[Mapping[str, Any]]], known: KeyedObjects,
                 key_of: Callable[[Mapping[str, Any]], ObjectKey | None]) -> None:
        self._listed, self._key_of = listed, key_of
        self.known = known  # this part's own once keyed
        self._found: dict[ObjectKey, Mapping[str, Any]] | None = None

    def _keyed(self) -> dict[ObjectKey, Mapping[str, Any]]:
        if self._found is None:
            found: dict[ObjectKey, Mapping[str, Any]] = {}
            keys: KeyedObjects = {}
            known, key_of = self.known, self._key_of
            for obj in self._listed():
                hit = known.get(id(obj))
                key = hit[1] if hit is not None and hit[0] is obj else key_of(obj)
                keys[id(obj)] = (obj, key)
                if key is not None:
                    found[key] = obj
            self._found, self.known = found, keys
        return self._found

    def __getitem__(self, key: ObjectKey) -> Mapping[str, Any]:
        return self._keyed()[key]

    def get(self, key: ObjectKey, default: Any = None) -> Any:
        return self._keyed().get(key, default)

    def __iter__(self) -> Iterator[ObjectKey]:
        return iter(self._keyed())

    def __len__(self) -> int:
        return len(self._keyed())


class WatchedObjects(Mapping[ObjectKey, Mapping[str, Any]]):
    """The union of ``parts`` (a later part wins a key two hold, as ``dict.update`` in order), then
    ``overrides`` (an object put in place of a part's, or None: left out). Read-only: the parts are shared with
    the coordinator's per-store memo and must not be changed."""

    def __init__(self, parts: tuple[Mapping[ObjectKey, Mapping[str, Any]], ...],
                 overrides: Mapping[ObjectKey, Mapping[str, Any] | None] | None = None) -> None:
        self._parts = parts
        self._overrides = dict(overrides or {})
        self._merged: dict[ObjectKey, Mapping[str, Any]] | None = None

    def with_overrides(self, overrides: Mapping[ObjectKey, Mapping[str, Any] | None]) -> WatchedObjects:
        """These objects with ``overrides`` on top (None: the key left out); no copy of the parts."""
        return WatchedObjects(self._parts, {**self._overrides, **overrides}) if overrides else self

    def _lookup(self, key: ObjectKey) -> Mapping[str, Any] | None:
        if key in self._overrides:
            return self._overrides[key]
        for part in reversed(self._parts):
            found: Mapping[str, Any] | None = part.get(key)
            if found is not None:
                return found
        return None

    def __getitem__(self, key: ObjectKey) -> Mapping[str, Any]:
        found = self._lookup(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self._lookup(key) is not None

    def _all(self) -> dict[ObjectKey, Mapping[str, Any]]:
        if self._merged is None:
            self._merged = overlaid(self._parts, self._overrides)
        return self._merged

    def __iter__(self) -> Iterator[ObjectKey]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
