"""``{% fragment %}``: a render reusing fragments is byte-identical to a full render, whatever changed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.templating.engine import FragmentMismatch, RenderInputs, RenderResult, TemplateEngine, TemplateSet
from haptic.templating.libraries import load_library
from tests.unit.haptic.templating.helpers import engine_for


def _ingress(i: int, host: str | None = None, **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": f"ns{i % 3}", "name": f"app{i}",
                            "creationTimestamp": f"2026-01-01T00:00:{i:02d}Z"}
    if annotations:
        meta["annotations"] = {f"haproxy-haptic.org/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta,
            "spec": {"ingressClassName": "haptic", "rules": [{"host": host or f"app{i}.example", "http": {"paths": [
                {"path": f"/p{i}", "pathType": "Prefix",
                 "backend": {"service": {"name": f"svc{i}", "port": {"number": 80}}}}]}}]}}


def _service(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": f"ns{i % 3}", "name": f"svc{i}"},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def _slice(i: int, count: int) -> dict[str, Any]:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"namespace": f"ns{i % 3}", "name": f"svc{i}-x",
                         "labels": {"kubernetes.io/service-name": f"svc{i}"}},
            "addressType": "IPv4", "ports": [{"name": "http", "port": 8080}],
            "endpoints": [{"addresses": [f"10.0.{i}.{k}"], "conditions": {"ready": True}} for k in range(1, count + 1)]}


class Library:
    """The Ingress library over real stores, rendered with fragments (checked against a full render)."""

    def __init__(self, n: int) -> None:
        lib = load_library("ingress")
        spec = SimpleNamespace(haproxy_config=lib["haproxyConfig"], template_snippets=lib["templateSnippets"],
                               maps=lib.get("maps", {}))
        self.engine = TemplateEngine(TemplateSet.from_spec(spec))
        self.engine.verify_fragments = True
        self.stores = {name: ResourceStore(name, w["indexBy"], w.get("fieldSelector"),
                                           lib.get("watchedResourcesIgnoreFields", []))
                       for name, w in lib["watchedResources"].items()}
        self.extra = lib["templatingSettings"]["extraContext"]
        for i in range(n):
            self.stores["ingresses"].apply(_ingress(i))
            self.stores["services"].apply(_service(i))
            self.stores["endpoints"].apply(_slice(i, 2))

    def render(self) -> RenderResult:
        return self.engine.render(RenderInputs(stores=self.stores, extra_context=self.extra))


def test_changes_of_every_kind_render_as_a_full_render_would() -> None:
    lib = Library(12)
    first = lib.render()
    assert lib.engine.fragment_cache.misses > 0 and lib.engine.fragment_cache.hits == 0
    again = lib.render()
    assert again.config == first.config and lib.engine.fragment_cache.misses == 0
    changes = [
        lambda: lib.stores["endpoints"].apply(_slice(3, 5)),  # endpoints grow within the slots
        lambda: lib.stores["endpoints"].apply(_slice(3, 14)),  # ... and beyond them
        lambda: lib.stores["ingresses"].apply(_ingress(20)),  # a new Ingress, its Service missing
        lambda: lib.stores["services"].apply(_service(20)),
        lambda: lib.stores["ingresses"].apply(_ingress(5, timeout_server="7s", balance="leastconn")),
        lambda: lib.stores["ingresses"].apply(_ingress(30, host="app1.example")),  # a host conflict (ns0 vs ns1)
        lambda: lib.stores["ingresses"].apply(_ingress(7, ssl_redirect="true")),
        lambda: lib.stores["ingresses"].remove(_ingress(1)),  # the conflict resolves
        lambda: lib.stores["services"].remove(_service(2)),
        lambda: lib.stores["ingresses"].apply(_ingress(8, request_set_header="X-A bad\nvalue")),  # refused
    ]
    seen = {first.config}
    for change in changes:
        change()
        result = lib.render()  # verify_fragments: a FragmentMismatch would fail the test here
        seen.add(result.config)
        assert lib.engine.fragment_cache.hits > 0
    assert len(seen) >= 8  # the changes did change the config


def test_a_change_re_renders_only_the_fragments_that_read_it() -> None:
    lib = Library(12)
    lib.render()
    lib.stores["endpoints"].apply(_slice(4, 3))
    lib.render()
    # the Ingress whose endpoints changed; the maps and selection are reused
    assert lib.engine.fragment_cache.misses == 1


def test_a_stale_fragment_is_caught_by_the_verification() -> None:
    lib = Library(3)
    lib.render()
    # Tamper with a cached text: the verification compares against a full render and refuses.
    for entry in lib.engine.fragment_cache.entries():
        entry.text = entry.text.replace("balance roundrobin", "balance first")
    for record in lib.engine.fragment_cache._loops_current.values():  # a fragment loop's items, reused at once
        record.texts[:] = [text.replace("balance roundrobin", "balance first") for text in record.texts]
        record._joined = None
    with pytest.raises(FragmentMismatch):
        lib.render()


def test_first_seen_claims_decide_as_in_a_full_render() -> None:
    source = (
        "{% for x in extraContext.order %}{% fragment %}"
        "{% if first_seen('k', x.key) %}{{ x.name }} first\n{% else %}{{ x.name }} again\n{% endif %}"
        "{% endfragment %}{% endfor %}"
    )
    engine = engine_for(source)
    engine.verify_fragments = True
    a, b = {"name": "a", "key": 1}, {"name": "b", "key": 1}
    assert engine.render(RenderInputs(extra_context={"order": [a, b]})).config == "a first\nb again\n"
    assert engine.render(RenderInputs(extra_context={"order": [b, a]})).config == "b first\na again\n"


def test_fragments_reading_the_clock_or_their_own_writes_render_every_time() -> None:
    source = (
        "{% fragment %}{{ now().year }}{% endfragment %}"
        "{% fragment %}{% do shared.set('x', 1) %}{{ shared.get('x') }}{% endfragment %}"
    )
    engine = engine_for(source)
    for _ in range(2):
        assert engine.render(RenderInputs(wall_time=1_800_000_000.0)).config == "20271"
    assert engine.fragment_cache.hits == 0 and engine.fragment_cache.misses == 2


def test_a_fragment_keyed_on_a_value_outside_it() -> None:
    source = "{% set label = extraContext.label %}{% fragment %}{{ label }}{% endfragment %}"
    engine = engine_for(source)
    assert engine.render(RenderInputs(extra_context={"label": "one"})).config == "one"
    assert engine.render(RenderInputs(extra_context={"label": "two"})).config == "two"
    assert engine.render(RenderInputs(extra_context={"label": "two"})).config == "two"
    assert engine.fragment_cache.hits == 1


def test_without_fragments_nothing_is_cached() -> None:
    lib = Library(2)
    lib.engine.fragments = False
    assert lib.render().config == lib.render().config
    assert lib.engine.fragment_cache.hits == lib.engine.fragment_cache.misses == 0


class _CountingStore(ResourceStore):
    """A store that counts the lookups made of it."""

    asked: list[tuple[Any, ...]]

    def lookup(self, *keys: Any) -> Any:  # what ``fetch`` and the render context's reads go through
        self.asked.append(keys)
        return super().lookup(*keys)


def _counted(lib: Library, name: str) -> _CountingStore:
    store = lib.stores[name]
    store.__class__ = _CountingStore
    counting: _CountingStore = store  # type: ignore[assignment]
    counting.asked = []
    return counting


def test_a_reused_fragment_asks_only_the_stores_written_under_its_lookups() -> None:
    lib = Library(12)
    lib.render()
    endpoints = _counted(lib, "endpoints")
    lib.stores["endpoints"].apply(_slice(4, 3))
    lib.render()
    # the one Ingress whose slices changed is checked (its lookup answers otherwise) and renders again, and the
    # full render of the verification asks for all 12; the reused fragments of the 11 others did not ask
    assert endpoints.asked.count(("ns1", "svc4")) == 3
    assert len(endpoints.asked) == 2 + 12


@pytest.mark.parametrize("change", ["new slice, same Service", "slice moved to another Service", "slice removed"])
def test_a_lookup_whose_answer_changed_is_never_taken_from_the_cache(change: str) -> None:
    lib = Library(6)
    lib.render()
    if change == "new slice, same Service":  # no object the fragment read changed: a new one joins its lookup
        extra = _slice(2, 2)
        extra["metadata"]["name"] = "svc2-y"
        extra["endpoints"] = [{"addresses": ["10.9.9.9"], "conditions": {"ready": True}}]
        lib.stores["endpoints"].apply(extra)
    elif change == "slice moved to another Service":
        moved = _slice(2, 2)
        moved["metadata"]["labels"] = {"kubernetes.io/service-name": "svc5"}  # ns2 both
        lib.stores["endpoints"].apply(moved)
    else:
        lib.stores["endpoints"].remove(_slice(2, 2))
    before = lib.engine.fragment_cache
    result = lib.render()  # verify_fragments: a stale reuse fails here with FragmentMismatch
    assert before.misses >= 1
    assert ("10.9.9.9" in result.config) == (change == "new slice, same Service")


def test_the_verification_fails_when_the_change_log_hides_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = Library(4)
    lib.render()
    lib.stores["endpoints"].apply(_slice(1, 5))
    monkeypatch.setattr(ResourceStore, "changed_since", lambda self, mark: frozenset())
    with pytest.raises(FragmentMismatch):
        lib.render()


def test_per_object_isolation_checks_every_lookup_again() -> None:
    lib = Library(4)
    lib.render()
    lib.engine.verify_fragments = False  # only the reused fragments' checks ask the store
    endpoints = _counted(lib, "endpoints")
    skip = frozenset({("Ingress", "ns0", "app3")})
    for inputs in (RenderInputs(stores=lib.stores, extra_context=lib.extra, skip=skip),
                   RenderInputs(stores=lib.stores, extra_context=lib.extra)):
        endpoints.asked.clear()
        lib.engine.render(inputs)
        reused = lib.engine.fragment_cache.hits
        assert reused >= 3 and len(endpoints.asked) >= 3, "the skipping stores' answers are checked"


def test_a_fragment_loop_renders_as_a_for_loop_of_fragments() -> None:
    body = ("{% set n = x.n %}{% if first_seen('k', n % 3) %}{{ n }} first{% else %}{{ n }} again{% endif %}\n"
            "{% do shared.append('seen', n) %}{{ label }}\n")
    looped = "{% fragment for x in extraContext.order %}\n" + body + "{% endfragment %}\n{{ shared.get('seen') }}"
    nested = ("{% for x in extraContext.order %}\n{% fragment %}\n" + body + "{% endfragment %}\n{% endfor %}\n"
              "{{ shared.get('seen') }}")
    a, b = engine_for("{% set label = 'L' %}" + looped), engine_for("{% set label = 'L' %}" + nested)
    a.verify_fragments = True
    items = [{"n": i} for i in range(7)]
    hits = []
    for order in (items, items[::-1], [*items[2:], {"n": 9}], []):
        inputs = RenderInputs(extra_context={"order": order})
        assert a.render(inputs).config == b.render(inputs).config
        hits.append(a.fragment_cache.hits)
    assert hits[0] == 0 and hits[1] > 0 and hits[2] > 0


def test_the_ingress_library_s_fragment_loop_renders_as_its_for_loop_did() -> None:
    lib = Library(12)
    spec = load_library("ingress")
    snippets = dict(spec["templateSnippets"])
    source = snippets["ingress-backends"]["template"]
    loop = '{% fragment for ing in shared.get("ingresses") %}\n'
    assert loop in source and source.rstrip().endswith("{% endfragment %}")
    snippets["ingress-backends"] = {"template": source.replace(loop, '{% for ing in shared.get("ingresses") %}\n'
                                                               "{% fragment %}\n").rstrip() + "\n{% endfor %}\n"}
    nested = TemplateEngine(TemplateSet.from_spec(SimpleNamespace(
        haproxy_config=spec["haproxyConfig"], template_snippets=snippets, maps=spec.get("maps", {}))))
    for change in (lambda: None, lambda: lib.stores["endpoints"].apply(_slice(3, 5)),
                   lambda: lib.stores["ingresses"].apply(_ingress(5, timeout_server="7s")),
                   lambda: lib.stores["ingresses"].remove(_ingress(1))):
        change()
        inputs = RenderInputs(stores=lib.stores, extra_context=lib.extra)
        ours, theirs = lib.engine.render(inputs), nested.render(inputs)
        assert (ours.config, ours.aux, ours.warnings) == (theirs.config, theirs.aux, theirs.warnings)


def test_ingress_statuses_are_the_same_objects_while_nothing_they_say_changed() -> None:
    lib = Library(4)

    def statuses(address: str) -> dict[tuple[str, str, str], Any]:
        inputs = RenderInputs(stores=lib.stores, extra_context=lib.extra, publish_address=address)
        return {s.ref.key: s for s in lib.engine.render(inputs).statuses}

    first, again = statuses("10.1.1.1"), statuses("10.1.1.1")
    assert len(first) == 4 and all(again[k] is first[k] for k in first)
    moved = statuses("10.2.2.2")
    assert all(moved[k].status == {"loadBalancer": {"ingress": [{"ip": "10.2.2.2"}]}} for k in first)
    lib.stores["ingresses"].apply(_ingress(30, host="app1.example"))  # ns0 claims ns1's host: left out
    conflict = statuses("10.2.2.2")
    left_out = conflict[("Ingress", "ns0", "app30")].status["loadBalancer"]["ingress"][0]
    assert left_out["ports"][0]["error"] == "haproxy-haptic.org/HostConflict"
    assert conflict[("Ingress", "ns1", "app1")] is moved[("Ingress", "ns1", "app1")]


def test_a_fragment_loop_body_has_no_loop_of_its_own() -> None:
    from haptic.templating.errors import TemplateCompileError

    with pytest.raises(TemplateCompileError, match="'loop' is not available"):
        engine_for("{% fragment for x in [1, 2] %}{{ loop.index }}{% endfragment %}")
    inner = engine_for("{% fragment for x in [[1, 2]] %}{% for y in x %}{{ loop.index }}{% endfor %}{% endfragment %}")
    assert inner.render(RenderInputs()).config == "12"


def test_a_read_equal_by_value_is_kept_as_read_now() -> None:
    lib = Library(6)
    lib.render()
    lib.engine.fragment_cache.forget_loops()  # every Ingress renders again: equal routes, new objects
    result = lib.render()
    assert lib.engine.fragment_cache.hits > 0
    routes = result.context["shared"].snapshot()["routes"]
    reads = [op[4] for entry in lib.engine.fragment_cache.entries() for op in entry.ops
             if op[:3] == (0, "shared", "get") and op[3][0] == "routes"]
    assert reads, "the maps read the routes"
    for recorded in reads:
        kept = recorded[1]
        assert len(kept) == len(routes) and all(a is b for a, b in zip(kept, routes, strict=True))


def test_a_value_set_whole_is_known_again_by_identity_and_a_growing_list_never() -> None:
    """``shared.get`` of a value ``set`` (nothing changes it in place) is reused on the very same object without a
    comparison; an equal new object is compared; a list that ``append`` grows (or a value naming it) is always
    compared, as what it holds after the read is not what the fragment read."""
    source = ("{% do shared.set('hosts', extraContext.hosts) %}"
              "{% do shared.append('grown', 'a') %}{% do shared.set('alias', shared.get('grown')) %}"
              "{% fragment %}hosts {{ shared.get('hosts') | join(',') }}{% endfragment %}\n"
              "{% fragment %}alias {{ shared.get('alias') | join(',') }}{% endfragment %}\n"
              "{% do shared.append('grown', extraContext.more) %}")
    engine = engine_for(source)
    engine.verify_fragments = True
    hosts = [f"h{i}" for i in range(40)]

    def render(value: list[str], more: str) -> str:
        return engine.render(RenderInputs(extra_context={"hosts": value, "more": more})).config

    def held_reads() -> list[Any]:
        return [getattr(op[4], "source", None) for entry in engine.fragment_cache.entries() for op in entry.ops
                if op[:3] == (0, "shared", "get") and op[3][0] == "hosts"]

    first = render(hosts, "b")
    assert held_reads() == [hosts] and held_reads()[0] is hosts
    assert render(hosts, "c") == first and engine.fragment_cache.misses == 0
    equal = list(hosts)
    assert render(equal, "d") == first and engine.fragment_cache.misses == 0  # compared, reused
    assert held_reads()[0] is equal  # kept as read now: the next render knows it by identity
    changed = render([*hosts, "new"], "e")
    assert "h39,new" in changed and engine.fragment_cache.misses == 1
    aliases = [op[4] for entry in engine.fragment_cache.entries() for op in entry.ops
               if op[:3] == (0, "shared", "get") and op[3][0] == "alias"]
    assert aliases and not any(hasattr(a, "source") for a in aliases)
