"""``gc_paused``: the collector is back on only when the last holder ends, and only if it was on."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from haptic.core.gc_pause import gc_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("collector_on")
def test_overlapping_holders_turn_it_back_on_once_when_the_last_ends() -> None:
    resumed: list[str] = []
    first, second = gc_paused(lambda: resumed.append("first")), gc_paused(lambda: resumed.append("second"))
    first.__enter__()
    second.__enter__()  # another thread's render begins while the first runs
    assert not gc.isenabled()
    first.__exit__(None, None, None)
    assert not gc.isenabled() and resumed == []  # the second still runs
    second.__exit__(None, None, None)
    assert gc.isenabled() and resumed == ["second"]


@pytest.mark.usefixtures("collector_on")
def test_it_stays_off_when_it_was_off_and_comes_back_after_an_error() -> None:
    gc.disable()
    with gc_paused(lambda: pytest.fail("resumed a collector that was off")):
        pass
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_what_a_paused_pass_kept_goes_to_the_oldest_generation_unless_told_otherwise() -> None:
    # every large pass (render, parse) keeps most of what it built for the next one: no young collection should
    # visit it element by element on the way up
    with gc_paused():
        kept = [[n] for n in range(100)]
    assert any(o is kept for o in gc.get_objects(generation=2))
    with gc_paused(None):
        young = [[n] for n in range(100)]
    assert not any(o is young for o in gc.get_objects(generation=2))
    assert gc.isenabled() and gc.get_freeze_count() == 0
