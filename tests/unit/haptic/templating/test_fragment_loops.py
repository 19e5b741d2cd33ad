"""Fragment loops reused in bulk: a loop over the same items takes only the items whose inputs changed through
the per-item path, and the render stays byte-identical to a full one (``verify_fragments`` compares each render
with a render without fragments and raises ``FragmentMismatch`` on any difference)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from haptic.k8s.store import ResourceStore
from haptic.templating import engine as engine_module
from haptic.templating.engine import FragmentMismatch, RenderInputs, RenderResult
from tests.unit.haptic.templating.helpers import engine_for
from tests.unit.haptic.templating.test_fragments import Library, _ingress, _service, _slice

# Before the loop: a shared mark and a first_seen claim the items' bodies read; after it: what the items appended.
_SOURCE = (
    "{% for name in extraContext.vip %}{% do shared.mark('vip', name) %}{% endfor %}"
    "{% if extraContext.pre %}{% do first_seen('k', extraContext.pre) %}{% endif %}"
    "{% fragment for x in resources.widgets.list() %}"
    "{% set thing = resources.things.get_single(x.metadata.namespace, x.spec.thing) %}"
    "{% if first_seen('k', x.spec.key) %}claim {{ x.spec.key }} {% endif %}"
    "{{ x.metadata.name }}={{ thing.spec.value if thing else 'none' }}"
    "{{ ' vip' if shared.marked('vip', x.metadata.name) else '' }}\n"
    "{% do shared.append('names', x.metadata.name) %}"
    "{% if thing and thing.spec.value == 'warn' %}{% do warn('thing of ' ~ x.metadata.name) %}{% endif %}"
    "{% endfragment %}"
    "names: {{ (shared.get('names') or []) | join(',') }}\n"
)


def _item(i: int, key: str | None = None, thing: str | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Item", "metadata": {"namespace": "ns", "name": f"i{i:02d}"},
            "spec": {"key": key or f"k{i}", "thing": thing or f"t{i}"}}


def _thing(i: int, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Thing", "metadata": {"namespace": "ns", "name": f"t{i}"},
            "spec": {"value": value}}


class Loop:
    def __init__(self, n: int) -> None:
        self.engine = engine_for(_SOURCE)
        self.engine.verify_fragments = True
        self.stores = {"widgets": ResourceStore("widgets", ["metadata.namespace", "metadata.name"]),
                       "things": ResourceStore("things", ["metadata.namespace", "metadata.name"])}
        self.extra: dict[str, Any] = {"vip": [], "pre": ""}
        for i in range(n):
            self.stores["widgets"].apply(_item(i))
            self.stores["things"].apply(_thing(i, f"v{i}"))

    def render(self) -> RenderResult:
        return self.engine.render(RenderInputs(stores=self.stores, extra_context=dict(self.extra)))


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many journals the per-item path replayed, per render."""
    counted: list[int] = [0]
    real = engine_module.replay

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted[-1] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_module, "replay", counting)
    return counted


def test_an_unchanged_loop_replays_no_journal_and_a_changed_item_renders_again(replays: list[int]) -> None:
    loop = Loop(20)
    first = loop.render()
    replays.append(0)
    assert loop.render().config == first.config
    assert replays[-1] == 0 and loop.engine.fragment_cache.misses == 0
    loop.stores["things"].apply(_thing(7, "changed"))
    replays.append(0)
    result = loop.render()
    assert "i07=changed\n" in result.config and "i06=v6\n" in result.config
    assert replays[-1] == 1 and loop.engine.fragment_cache.misses == 1  # only item 7 took the per-item path
    assert result.config.endswith("names: " + ",".join(f"i{i:02d}" for i in range(20)) + "\n")


@pytest.mark.parametrize("change", [
    "add", "remove", "rename-order", "thing-gone", "thing-new", "vip", "vip-off", "claim-before", "claim-moves",
    "claim-taken", "warn", "unrelated",
])
def test_every_kind_of_change_renders_as_a_full_render(change: str) -> None:
    loop = Loop(12)
    loop.extra["vip"] = ["i05"]
    loop.render()
    loop.render()  # the second render is the first to use the loop's record
    edits: dict[str, Callable[[], None]] = {
        "add": lambda: loop.stores["widgets"].apply(_item(30)),
        "remove": lambda: loop.stores["widgets"].remove(_item(4)),
        "rename-order": lambda: (loop.stores["widgets"].remove(_item(2)), loop.stores["widgets"].apply(
            {**_item(2), "metadata": {"namespace": "ns", "name": "i99"}})),
        "thing-gone": lambda: loop.stores["things"].remove(_thing(3, "")),
        "thing-new": lambda: (loop.stores["things"].apply(_thing(40, "x")),
                              loop.stores["widgets"].apply(_item(8, thing="t40"))),
        "vip": lambda: loop.extra.update(vip=["i05", "i09"]),  # a shared mark before the loop, read by item 9
        "vip-off": lambda: loop.extra.update(vip=[]),
        "claim-before": lambda: loop.extra.update(pre="k6"),  # item 6 no longer claims its key
        "claim-moves": lambda: loop.stores["widgets"].apply(_item(2, key="k10")),  # item 2 takes item 10's claim
        "claim-taken": lambda: loop.stores["widgets"].apply(_item(10, key="k1")),  # item 10 loses its claim
        "warn": lambda: loop.stores["things"].apply(_thing(5, "warn")),
        "unrelated": lambda: loop.stores["things"].apply(_thing(77, "nobody reads it")),
    }
    before = loop.render().config
    edits[change]()
    result = loop.render()  # FragmentMismatch here: the bulk reuse hid the change
    if change != "unrelated":
        assert result.config != before
    again = loop.render()
    assert again.config == result.config and again.warnings == result.warnings


def test_a_claim_that_moves_to_an_earlier_item_is_seen_by_the_later_ones() -> None:
    loop = Loop(12)
    loop.render()
    loop.render()
    loop.stores["widgets"].apply(_item(2, key="k10"))
    config = loop.render().config
    assert "claim k10 i02=" in config and "\ni10=v10" in config  # item 10 (untouched) lost its claim


def test_the_verification_catches_a_change_the_bulk_reuse_was_not_told_about(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = Loop(6)
    loop.render()
    loop.render()
    loop.stores["things"].apply(_thing(2, "hidden"))
    monkeypatch.setattr(ResourceStore, "changed_since", lambda self, mark: frozenset())
    with pytest.raises(FragmentMismatch):
        loop.render()


def test_a_failed_render_leaves_no_record_to_trust() -> None:
    source = ("{% fragment for x in resources.widgets.list() %}{{ x.metadata.name }}"
              "{{ resources.things.get_single('ns', x.spec.thing).spec.value.boom() }}{% endfragment %}")
    loop = Loop(3)
    loop.engine = engine_for(source)
    loop.engine.verify_fragments = True
    with pytest.raises(Exception):  # noqa: B017 - the body fails on purpose; any render error will do
        loop.render()
    loop.engine = engine_for(_SOURCE)
    loop.engine.verify_fragments = True
    loop.render()
    loop.render()


def test_the_ingress_library_over_deployments_and_time_renders_as_a_full_render() -> None:
    """Server slots: the deployed config moves on (the last render is deployed), endpoints grow and shrink, and
    the clock passes the quiet period after which few endpoints make the render ``shrinkable``."""
    lib = Library(15)
    deployed: str | None = None
    now = 1_800_000_000.0

    def render() -> RenderResult:
        nonlocal deployed
        result = lib.engine.render(RenderInputs(stores=lib.stores, extra_context=lib.extra,
                                                current_config=deployed, wall_time=now))
        deployed = result.config
        return result

    render()
    render()
    shrinkable = []
    for step, change in enumerate([
        lambda: lib.stores["endpoints"].apply(_slice(3, 5)),
        lambda: lib.stores["endpoints"].apply(_slice(3, 14)),  # beyond the slots
        lambda: lib.stores["endpoints"].apply(_slice(3, 1)),
        lambda: lib.stores["services"].remove(_service(4)),
        lambda: lib.stores["ingresses"].apply(_ingress(6, ssl_redirect="true")),
        lambda: None,
        lambda: lib.stores["endpoints"].apply(_slice(9, 3)),
    ]):
        change()
        now += 400.0 * step
        result = render()
        shrinkable.append(result.slots_shrinkable)
        assert lib.engine.fragment_cache.hits > 0
    assert shrinkable[0] is False and shrinkable[-1] is True  # the quiet period passed with few endpoints


def test_over_deployments_only_the_changed_items_take_the_per_item_path(replays: list[int]) -> None:
    """As the controller renders: the deployed config (read incrementally, unchanged backends the same objects)
    moves on after each render; an endpoint change keeps costing one item, not all of them."""
    from haptic.templating.current_config_cache import CurrentConfigCache

    lib = Library(40)
    deployed = CurrentConfigCache()
    text: str | None = None
    for step in range(6):
        lib.stores["endpoints"].apply(_slice(step % 4, 3 + step))
        replays.append(0)
        result = lib.engine.render(RenderInputs(stores=lib.stores, extra_context=lib.extra,
                                                current_config=deployed.read(text), wall_time=1e9 + step))
        text = result.config
        if step >= 2:
            # the changed Ingress renders; the replays are the few fragments outside the loop, not its 40 items
            assert lib.engine.fragment_cache.misses == 1 and replays[-1] < 12, step


def test_one_loop_rendered_several_times_per_render_over_duplicates_and_plain_values() -> None:
    """The same loop (same key) run for each group in one render, items repeated and plain strings: every render
    is the full render's, whatever the groups hold."""
    source = ("{% for g in extraContext.groups %}"
              "{% fragment for x in g %}{% if first_seen('x', x) %}{{ x }} first{% else %}{{ x }} again{% endif %}\n"
              "{% do shared.append('all', x) %}{% endfragment %}{% endfor %}"
              "{{ shared.get('all') | join(',') }}")
    engine = engine_for(source)
    engine.verify_fragments = True
    a, b = {"n": 1}, {"n": 2}
    for groups in ([["p", "q"], ["q", "r"]], [["p", "q"], ["q", "r"]], [["q", "r"], ["p", "q"]],
                   [[a, b, a], [b]], [[a, b, a], [b]], [[b, a], [a, b, a]], [["p"], []], [[], ["p"]]):
        engine.render(RenderInputs(extra_context={"groups": groups}))


def test_a_reused_loop_leaves_the_quiet_times_a_full_render_leaves() -> None:
    """The loop's carry takes the last render's quiet times whole when they are all its own backends': a backend
    that stopped being low, or is no longer assigned, must not keep its old time, or it would be shrinkable at
    once when it is low again (a full render starts its quiet period anew)."""
    from haptic.templating.current_config_cache import CurrentConfigCache

    fast, full = Library(8), Library(8)
    full.engine.fragments = False
    for lib in (fast, full):
        lib.engine.verify_fragments = False
        for i in range(8):
            lib.stores["endpoints"].apply(_slice(i, 3 if i != 3 else 1))  # only svc3 is low (1 of 10 slots)
    # as the controller reads the deployed config: unchanged backends stay the same objects, so the loop's items
    # whose endpoints did not change are reused in bulk
    readers = {id(fast): CurrentConfigCache(), id(full): CurrentConfigCache()}
    deployed: dict[int, str | None] = {id(fast): None, id(full): None}

    def render(lib: Library, now: float) -> RenderResult:
        current = readers[id(lib)].read(deployed[id(lib)])
        result = lib.engine.render(RenderInputs(stores=lib.stores, extra_context=lib.extra,
                                                current_config=current, wall_time=now))
        deployed[id(lib)] = result.config
        return result

    now = 1_800_000_000.0
    steps: list[tuple[float, Callable[[Library], object]]] = [
        (0.0, lambda lib: None),
        (10.0, lambda lib: None),  # the loop's record is used from here on
        (1000.0, lambda lib: lib.stores["endpoints"].apply(_slice(3, 3))),  # svc3 no longer low
        (10.0, lambda lib: lib.stores["endpoints"].apply(_slice(3, 1))),  # low again: its quiet period starts now
        (1000.0, lambda lib: lib.stores["services"].remove(_service(3))),  # svc3 not assigned at all
        (10.0, lambda lib: lib.stores["services"].apply(_service(3))),
    ]
    shrinkable: list[tuple[bool, bool]] = []
    for step, (wait, change) in enumerate(steps):
        now += wait
        for lib in (fast, full):
            change(lib)
        results = [render(lib, now) for lib in (fast, full)]
        assert results[0].config == results[1].config
        shrinkable.append((results[0].slots_shrinkable, results[1].slots_shrinkable))
        assert step < 2 or fast.engine.fragment_cache.misses < 3  # the loop reused in bulk
    assert [f for f, _ in shrinkable] == [b for _, b in shrinkable]
    assert fast.engine._slot_low_since == full.engine._slot_low_since
