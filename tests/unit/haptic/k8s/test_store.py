from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from haptic.k8s.jsonpath import JSONPathError
from haptic.k8s.selectors import SelectorError
from haptic.k8s.store import AmbiguousLookupError, ResourceStore, StoreError


def ingress(
    ns: str, name: str, cls: str = "haproxy", hosts: tuple[str, ...] = ("a.example",), **extra: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns, "managedFields": [{"manager": "kubectl"}], **extra},
        "spec": {"ingressClassName": cls, "rules": [{"host": h} for h in hosts]},
    }


def names(objs: list[Any]) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in objs]


@pytest.fixture
def store() -> ResourceStore:
    return ResourceStore("ingresses", ["metadata.namespace", "metadata.name"])


def test_apply_and_exact_lookup(store: ResourceStore) -> None:
    assert store.apply(ingress("default", "web"))
    assert len(store) == 1
    found = store.get_single("default", "web")
    assert found is not None and found["metadata"]["name"] == "web"
    assert store.get_single("default", "nope") is None
    assert store.get("default", "web") is found


def test_prefix_lookup_and_sorted_order(store: ResourceStore) -> None:
    objs = [ingress(ns, n) for ns in ("b", "a", "c") for n in ("z", "x", "y")]
    random.Random(7).shuffle(objs)
    for obj in objs:
        store.apply(obj)
    assert names(store.fetch("a")) == ["a/x", "a/y", "a/z"]
    assert names(store.fetch("c", "y")) == ["c/y"]
    assert names(store.fetch()) == names(store.list())
    assert names(store.list())[:4] == ["a/x", "a/y", "a/z", "b/x"]
    assert store.fetch("nope") == []


def test_order_does_not_depend_on_apply_order() -> None:
    objs = [ingress(f"ns{i % 3}", f"n{i}") for i in range(30)]
    first, second = ResourceStore("i", ["metadata.namespace"]), ResourceStore("i", ["metadata.namespace"])
    for obj in objs:
        first.apply(obj)
    for obj in reversed(objs):
        second.apply(obj)
    assert first.list() == second.list()
    assert first.fetch("ns1") == second.fetch("ns1")


def test_get_single_is_an_error_when_ambiguous(store: ResourceStore) -> None:
    store.apply(ingress("default", "a"))
    store.apply(ingress("default", "b"))
    with pytest.raises(AmbiguousLookupError, match="2 objects"):
        store.get_single("default")


def test_too_many_keys_is_an_error(store: ResourceStore) -> None:
    with pytest.raises(StoreError, match="indexBy has 2"):
        store.fetch("a", "b", "c")


def test_update_moves_the_object_between_index_keys() -> None:
    store = ResourceStore("ingresses", ["spec.ingressClassName", "metadata.name"])
    store.apply(ingress("default", "web", cls="one"))
    assert names(store.fetch("one")) == ["default/web"]
    assert store.apply(ingress("default", "web", cls="two"))
    assert store.fetch("one") == []
    assert names(store.fetch("two", "web")) == ["default/web"]
    assert len(store) == 1


def test_apply_of_an_identical_object_is_no_change(store: ResourceStore) -> None:
    assert store.apply(ingress("default", "web"))
    assert not store.apply(ingress("default", "web"))
    assert store.apply(ingress("default", "web", hosts=("b.example",)))


def test_update_is_visible_to_cached_lookups(store: ResourceStore) -> None:
    store.apply(ingress("default", "web"))
    assert store.fetch("default")[0]["spec"]["rules"][0]["host"] == "a.example"
    store.apply(ingress("default", "web", hosts=("new.example",)))
    assert store.fetch("default")[0]["spec"]["rules"][0]["host"] == "new.example"
    assert store.list()[0]["spec"]["rules"][0]["host"] == "new.example"


def test_remove(store: ResourceStore) -> None:
    store.apply(ingress("default", "web"))
    store.apply(ingress("default", "api"))
    assert store.remove(ingress("default", "web"))
    assert not store.remove(ingress("default", "web"))
    assert names(store.fetch("default")) == ["default/api"]
    assert store.fetch("default", "web") == []
    assert store.remove({"metadata": {"name": "api", "namespace": "default"}})
    assert len(store) == 0 and store.list() == [] and store.fetch("default") == []


def test_multi_valued_key_indexes_under_each_value() -> None:
    store = ResourceStore("ingresses", ["spec.rules[*].host"])
    store.apply(ingress("default", "multi", hosts=("a.example", "b.example", "a.example")))
    store.apply(ingress("default", "single", hosts=("b.example",)))
    assert names(store.fetch("a.example")) == ["default/multi"]
    assert names(store.fetch("b.example")) == ["default/multi", "default/single"]
    assert len(store) == 2
    store.apply(ingress("default", "multi", hosts=("c.example",)))
    assert store.fetch("a.example") == []
    assert names(store.fetch("b.example")) == ["default/single"]


def test_missing_key_indexes_under_empty_string() -> None:
    store = ResourceStore("services", ["metadata.labels['app']"])
    store.apply({"metadata": {"name": "nolabel", "namespace": "x"}})
    assert names(store.fetch("")) == ["x/nolabel"]


def test_non_string_keys_are_matched_as_text() -> None:
    store = ResourceStore("svc", ["spec.port", "spec.tls"])
    store.apply({"metadata": {"name": "s"}, "spec": {"port": 80, "tls": True}})
    assert names(store.fetch(80, True)) == ["/s"]
    assert names(store.fetch("80", "true")) == ["/s"]


def test_escaped_label_key_index() -> None:
    store = ResourceStore("endpointslices", [r"metadata.labels.kubernetes\.io/service-name"])
    store.apply({"metadata": {"name": "e1", "namespace": "d", "labels": {"kubernetes.io/service-name": "web"}}})
    store.apply({"metadata": {"name": "e2", "namespace": "d", "labels": {"kubernetes.io/service-name": "api"}}})
    assert names(store.fetch("web")) == ["d/e1"]


def test_field_selector_filters_on_apply() -> None:
    store = ResourceStore("ingresses", ["metadata.namespace"], field_selector="spec.ingressClassName=haproxy")
    assert store.apply(ingress("default", "mine"))
    assert not store.apply(ingress("default", "theirs", cls="nginx"))
    assert names(store.list()) == ["default/mine"]
    # an object that stops matching is removed, and that is a change
    assert store.apply(ingress("default", "mine", cls="nginx"))
    assert len(store) == 0
    obj = ingress("default", "x")
    del obj["spec"]["ingressClassName"]
    assert not store.apply(obj)


def test_ignore_fields_are_stripped_without_mutating_the_input() -> None:
    store = ResourceStore(
        "ingresses",
        ["metadata.namespace"],
        ignore_fields=[
            "metadata.managedFields",
            "metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']",
        ],
    )
    obj = ingress("default", "web", annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"})
    before = copy.deepcopy(obj)
    store.apply(obj)
    stored = store.list()[0]
    assert "managedFields" not in stored["metadata"]
    assert stored["metadata"]["annotations"] == {"keep": "1"}
    assert obj == before


def test_ignored_field_changes_are_not_changes() -> None:
    store = ResourceStore("ingresses", ["metadata.namespace"], ignore_fields=["metadata.managedFields"])
    store.apply(ingress("default", "web"))
    noisy = ingress("default", "web")
    noisy["metadata"]["managedFields"] = [{"manager": "someone-else"}]
    assert not store.apply(noisy)


def test_replace_all_adds_updates_and_removes(store: ResourceStore) -> None:
    store.apply(ingress("a", "gone"))
    store.apply(ingress("a", "same"))
    assert store.replace_all([ingress("a", "same"), ingress("b", "new")])
    assert names(store.list()) == ["a/same", "b/new"]
    assert not store.replace_all([ingress("b", "new"), ingress("a", "same")])


def test_cluster_scoped_objects() -> None:
    store = ResourceStore("nodes", ["metadata.name"])
    store.apply({"metadata": {"name": "node-1"}})
    assert store.get(None, "node-1") is not None
    assert names(store.fetch("node-1")) == ["/node-1"]


def test_fetch_returns_a_fresh_list(store: ResourceStore) -> None:
    store.apply(ingress("default", "web"))
    first = store.fetch("default")
    first.clear()
    assert len(store.fetch("default")) == 1
    listed = store.list()
    listed.append({})
    assert len(store.list()) == 1


def test_lookup_is_the_kept_tuple_until_a_write_under_it(store: ResourceStore) -> None:
    store.apply(ingress("default", "web"))
    first = store.lookup("default", "web")
    assert names(list(first)) == ["default/web"] and store.lookup("default", "web") is first
    store.apply(ingress("other", "web"))  # another prefix: the kept answer stays
    assert store.lookup("default", "web") is first
    store.apply(ingress("default", "web", hosts=("new.example",)))
    assert store.lookup("default", "web")[0]["spec"]["rules"][0]["host"] == "new.example"
    # a bucket of one object grows to two (sorted from then on) and shrinks again
    assert names(list(store.lookup("default"))) == ["default/web"]
    store.apply(ingress("default", "api"))
    assert names(list(store.lookup("default"))) == ["default/api", "default/web"]
    store.remove(ingress("default", "web"))
    assert names(list(store.lookup("default"))) == ["default/api"] and store.lookup("default", "web") == ()
    assert names(list(store.lookup())) == ["default/api", "other/web"]
    # keys that are not text are looked up as text, unhashable ones included
    numbered = ResourceStore("x", ["metadata.labels.n"])
    numbered.apply({"metadata": {"name": "a", "labels": {"n": "80"}}})
    assert names(list(numbered.lookup(80))) == ["/a"] and numbered.lookup({"n": 1}) == ()


def test_nameless_object_is_rejected(store: ResourceStore) -> None:
    with pytest.raises(StoreError, match=r"metadata\.name"):
        store.apply({"metadata": {"namespace": "x"}})


def test_bad_construction_arguments() -> None:
    with pytest.raises(StoreError):
        ResourceStore("x", [])
    with pytest.raises(JSONPathError):
        ResourceStore("x", ["metadata["])
    with pytest.raises(SelectorError):
        ResourceStore("x", ["metadata.name"], field_selector="spec.x")
    with pytest.raises(StoreError, match="cannot remove"):
        ResourceStore("x", ["metadata.name"], ignore_fields=["..managedFields"])


def test_clear_and_clear_caches(store: ResourceStore) -> None:
    store.apply(ingress("default", "web"))
    assert store.fetch("default")
    store.clear()
    assert store.fetch("default") == [] and store.list() == [] and len(store) == 0


def test_random_operations_agree_with_a_naive_model() -> None:
    rng = random.Random(42)
    store = ResourceStore("ingresses", ["spec.ingressClassName", "metadata.namespace"])
    model: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(2000):
        ns, name, cls = rng.choice("abc"), rng.choice("uvwxyz"), rng.choice(["x", "y"])
        obj = ingress(ns, name, cls=cls)
        if rng.random() < 0.3:
            changed = store.remove(obj)
            assert changed == ((ns, name) in model)
            model.pop((ns, name), None)
        else:
            store.apply(obj)
            model[(ns, name)] = obj
        if rng.random() < 0.1:
            key_cls, key_ns = rng.choice(["x", "y"]), rng.choice("abc")
            expected = sorted(k for k, o in model.items() if o["spec"]["ingressClassName"] == key_cls)
            got = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.fetch(key_cls)]
            assert got == expected
            expected2 = [k for k in expected if k[0] == key_ns]
            got2 = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.fetch(key_cls, key_ns)]
            assert got2 == expected2
    assert len(store) == len(model)


def _slice_of(name: str, service: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "default", "name": name, "labels": {"kubernetes.io/service-name": service}}}


def test_the_change_log_names_the_prefixes_of_both_versions_of_what_was_written() -> None:
    store = ResourceStore("endpoints", ["metadata.namespace", "metadata.labels['kubernetes.io/service-name']"])
    store.apply(_slice_of("a-1", "a"))
    mark = store.change_mark()
    assert store.changed_since(mark) == frozenset()
    store.apply(_slice_of("a-1", "a"))  # unchanged: no write
    assert store.changed_since(mark) == frozenset()
    store.apply(_slice_of("a-1", "b"))  # moved to another Service: both lookups may answer differently
    assert store.changed_since(mark) == {(), ("default",), ("default", "a"), ("default", "b")}
    later = store.change_mark()
    snapshot = store.snapshot()
    store.remove(_slice_of("a-1", "b"))
    assert snapshot.changed_since(later) == frozenset(), "a snapshot sees the log as far as it was taken"
    assert store.changed_since(later) == {(), ("default",), ("default", "b")}
    assert store.changed_since(None) is None
    assert ResourceStore("other", ["metadata.name"]).changed_since(mark) is None, "another store's mark"
    store.clear()
    assert store.changed_since(later) is None, "a cleared store cannot tell"
