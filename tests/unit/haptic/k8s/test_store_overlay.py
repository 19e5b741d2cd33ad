"""``OverlayStore``: answers as the store would after the change, and never writes to the store."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.k8s.store import AmbiguousLookupError, ResourceStore, StoreError
from haptic.k8s.store_overlay import OverlayStore


def svc(namespace: str, name: str, app: str = "web", **extra: Any) -> dict[str, Any]:
    return {"kind": "Service", "metadata": {"namespace": namespace, "name": name, "labels": {"app": app}}, **extra}


def names(objects: list[Any]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


@pytest.fixture
def store() -> ResourceStore:
    s = ResourceStore("services", ["metadata.namespace", "metadata.labels.app"])
    for obj in (svc("a", "x"), svc("b", "y"), svc("b", "z", app="api")):
        s.apply(obj)
    return s


def test_put_adds_in_identity_order_and_indexes(store: ResourceStore) -> None:
    overlay = OverlayStore(store, put=svc("b", "w", app="api"))
    assert names(overlay.list()) == ["a/x", "b/w", "b/y", "b/z"]
    assert names(overlay.fetch("b", "api")) == ["b/w", "b/z"]
    assert names(overlay.fetch("b", "web")) == ["b/y"]
    assert names(overlay.fetch("a")) == ["a/x"]
    assert len(overlay) == 4 and len(store) == 3
    assert overlay.get("b", "w") is not None and store.get("b", "w") is None


def test_put_replaces_and_moves_between_index_keys(store: ResourceStore) -> None:
    overlay = OverlayStore(store, put=svc("b", "y", app="api"))
    assert names(overlay.fetch("b", "web")) == []
    assert names(overlay.fetch("b", "api")) == ["b/y", "b/z"]
    assert len(overlay) == 3
    assert store.fetch("b", "web")[0]["metadata"]["labels"]["app"] == "web"
    with pytest.raises(AmbiguousLookupError):
        overlay.get_single("b", "api")
    assert overlay.get_single("a", "web") is not None


def test_remove_and_ignored_fields_and_selector() -> None:
    base = ResourceStore("secrets", ["metadata.namespace", "metadata.name"], field_selector="type=tls",
                         ignore_fields=["metadata.managedFields"])
    base.apply({"type": "tls", "metadata": {"namespace": "a", "name": "s1"}})
    base.apply({"type": "tls", "metadata": {"namespace": "a", "name": "s2"}})
    removed = OverlayStore(base, remove={"metadata": {"namespace": "a", "name": "s1"}})
    assert [o["metadata"]["name"] for o in removed.list()] == ["s2"] and len(removed) == 1
    assert removed.get("a", "s1") is None and base.get("a", "s1") is not None
    stripped = OverlayStore(base, put={"type": "tls", "metadata": {"namespace": "a", "name": "s3",
                                                                    "managedFields": [{"manager": "x"}]}})
    assert stripped.proposed is not None and "managedFields" not in stripped.proposed["metadata"]
    # Changing the type out of the selector takes the object out of the store, as the watcher would.
    opaque = OverlayStore(base, put={"type": "Opaque", "metadata": {"namespace": "a", "name": "s2"}})
    assert [o["metadata"]["name"] for o in opaque.list()] == ["s1"] and opaque.get("a", "s2") is None
    with pytest.raises(StoreError):
        opaque.fetch("a", "s1", "extra")
    with pytest.raises(ValueError):
        OverlayStore(base)
