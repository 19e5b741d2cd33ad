"""``WatchedObjects``: every watched object by (kind, namespace, name), merged from per-store parts only when
asked.

The coordinator takes this view of the stores for every render, and keeps one as the objects the last config that
validated rendered. Both are only read when ``haproxy -c`` rejects a render (to find the culprits) or while an
object is held back: merging 20,000 objects into one dict, and copying it, for every endpoint change cost more
than the change itself. Looking one object up asks the parts instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["ObjectKey", "WatchedObjects"]

ObjectKey = tuple[str, str, str]


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
            merged: dict[ObjectKey, Mapping[str, Any]] = {}
            for part in self._parts:
                merged.update(part)
            for key, obj in self._overrides.items():
                if obj is None:
                    merged.pop(key, None)
                else:
                    merged[key] = obj
            self._merged = merged
        return self._merged

    def __iter__(self) -> Iterator[ObjectKey]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())
