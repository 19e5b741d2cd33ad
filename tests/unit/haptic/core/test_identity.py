"""``same_items``: the very same objects in the same order, not equal ones."""

from __future__ import annotations

from collections.abc import Iterator

from haptic.core.identity import same_items


def test_the_same_objects_in_order_are_the_same_items_and_equal_copies_are_not() -> None:
    a, b = {"x": 1}, {"y": 2}
    assert same_items([a, b], (a, b))
    assert not same_items([a, b], [b, a])
    assert not same_items([a, b], [a, dict(b)])
    assert not same_items([a], [a, b])


def test_recent_answers_again_for_the_same_object_only_and_keeps_the_last_few() -> None:
    from haptic.core.identity import Recent

    calls: list[str] = []
    recent: Recent[int] = Recent(2)

    def length(text: str) -> int:
        return recent.answer(text, "len", lambda: calls.append(text) or len(text))

    a = "".join(["ab", "c"])
    equal = "".join(["a", "bc"])
    assert length(a) == 3 and length(a) == 3 and calls == ["abc"]
    assert length(equal) == 3 and len(calls) == 2, "an equal text that is another object is worked out again"
    length("".join(["x", "y"]))  # a third text: the oldest (a) goes
    assert length(a) == 3 and len(calls) == 4


def test_the_very_same_sequence_is_answered_without_walking_it() -> None:
    # the statuses of a render that changed none of them come back as the same tuple of 10,000: no walk
    class Unwalkable(list[int]):
        def __iter__(self) -> Iterator[int]:
            raise AssertionError("walked")

    items = Unwalkable(range(3))
    assert same_items(items, items)
    assert not same_items(items, [0, 1])  # another length: no walk either
