"""``SeenKeys``: keys claimed one at a time and runs lent by a loop record answer as one set would."""

from __future__ import annotations

from haptic.templating.seen_keys import SeenKeys


def _positions(n: int) -> dict[tuple[str, ...], int]:
    return {("backend", f"b{i}"): i for i in range(n)}


def _keys_at(a: int, b: int) -> list[tuple[str, ...]]:
    return [("backend", f"b{i}") for i in range(a, b)]


def test_a_run_claims_exactly_the_keys_of_its_positions() -> None:
    seen = SeenKeys([("x", "1")])
    positions = _positions(10)
    seen.add_run(positions, 2, 5, _keys_at)
    assert [i for i in range(10) if ("backend", f"b{i}") in seen] == [2, 3, 4]
    assert ("x", "1") in seen and ("x", "2") not in seen and ("other",) not in seen


def test_a_run_grows_over_items_that_claimed_their_keys_themselves() -> None:
    seen, positions = SeenKeys(), _positions(10)
    seen.add_run(positions, 0, 3, _keys_at)
    seen.add(("backend", "b3"))  # the changed item at 3 claimed its own key
    seen.add_run(positions, 4, 8, _keys_at)
    assert len(seen.runs) == 1 and seen.runs[0][1:] == [0, 8]
    assert [i for i in range(10) if ("backend", f"b{i}") in seen] == list(range(8))


def test_a_gap_whose_keys_nobody_claimed_starts_a_new_run() -> None:
    seen, positions = SeenKeys(), _positions(10)
    seen.add_run(positions, 0, 3, _keys_at)
    seen.add_run(positions, 4, 6, _keys_at)  # the item at 3 claims another key now
    assert len(seen.runs) == 2
    assert ("backend", "b3") not in seen and ("backend", "b5") in seen


def test_fingerprints_tell_apart_what_differs_and_match_what_does_not() -> None:
    positions = _positions(5)

    def state(stop: int, *own: str) -> SeenKeys:
        seen = SeenKeys([("k", o) for o in own])
        seen.add_run(positions, 0, stop, _keys_at)
        return seen

    assert state(3, "a").fingerprint() == state(3, "a").fingerprint()
    assert state(3, "a").fingerprint() != state(4, "a").fingerprint()
    assert state(3, "a").fingerprint() != state(3, "b").fingerprint()
    equal = dict(positions)  # another record holding the same claims: the same keys
    other = SeenKeys([("k", "a")])
    other.add_run(equal, 0, 3, _keys_at)
    assert other.fingerprint() == state(3, "a").fingerprint()
