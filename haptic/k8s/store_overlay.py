"""``OverlayStore``: a live ``ResourceStore`` seen as if one proposed change had been made to it.

The admission webhook renders the configuration "as if" an object were created, updated or deleted,
without touching the live store the controller renders from. The overlay answers ``list``, ``fetch``,
``get_single`` and ``get`` like the store would after the change (same index keys, same field
selector, same ignored fields, same namespace/name order) and never writes to the base store.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterator, Mapping
from typing import Any

from haptic.k8s.jsonpath import format_value
from haptic.k8s.store import Identity, Objects, ResourceStore, identity_of, single_match


class OverlayStore:
    """``base`` with ``put`` added or replacing its namesake, or with the object ``remove`` taken out."""

    def __init__(
        self,
        base: ResourceStore,
        *,
        put: Mapping[str, Any] | None = None,
        remove: Mapping[str, Any] | None = None,
    ) -> None:
        if (put is None) == (remove is None):
            raise ValueError("an overlay needs exactly one of put or remove")
        self.base = base
        self.name = base.name
        self._hidden: Identity = identity_of(put if put is not None else remove)  # type: ignore[arg-type]
        self._put: Mapping[str, Any] | None = None
        self._put_prefixes: frozenset[tuple[str, ...]] = frozenset()
        # An object failing the store's field selector would not be stored: the change is then a removal.
        if put is not None and base.matches_selector(put):
            self._put = base.prepare(put)
            self._put_prefixes = frozenset(
                key[:i] for key in base.index_keys(self._put) for i in range(1, len(key) + 1)
            )
        self._cache: dict[tuple[str, ...], Objects] = {}

    def __repr__(self) -> str:
        change = "put" if self._put is not None else "remove"
        return f"OverlayStore({self.name!r}, {change}={self._hidden!r}, objects={len(self)})"

    def snapshot(self) -> OverlayStore:
        """The same change over a snapshot of the base store (see ``ResourceStore.snapshot``)."""
        copy = object.__new__(OverlayStore)
        copy.__dict__.update(self.__dict__)
        copy.base = self.base.snapshot()
        copy._cache = {}
        return copy

    @property
    def proposed(self) -> Mapping[str, Any] | None:
        """The object as the store would keep it (ignored fields stripped); ``None`` for a removal."""
        return self._put

    def __len__(self) -> int:
        present = self.base.get(*self._hidden) is not None
        return len(self.base) - int(present) + int(self._put is not None)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.list())

    def _merged(self, prefix: tuple[str, ...], objects: Objects) -> Objects:
        cached = self._cache.get(prefix)
        if cached is not None:
            return list(cached)
        merged = [obj for obj in objects if identity_of(obj) != self._hidden]
        if self._put is not None and (not prefix or prefix in self._put_prefixes):
            insort(merged, self._put, key=identity_of)
        self._cache[prefix] = merged
        return list(merged)

    def list(self) -> Objects:
        return self._merged((), self.base.list())

    def fetch(self, *keys: Any) -> Objects:
        if not keys:
            return self.list()
        found = self.base.fetch(*keys)  # raises StoreError for too many keys, like the store
        return self._merged(tuple(format_value(k) for k in keys), found)

    def get_single(self, *keys: Any) -> Mapping[str, Any] | None:
        return single_match(self.name, keys, self.fetch(*keys))

    def get(self, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        if (namespace or "", name) == self._hidden:
            return self._put
        return self.base.get(namespace, name)
