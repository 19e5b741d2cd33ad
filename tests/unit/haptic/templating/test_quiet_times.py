"""``QuietTimes``: a render's changes over the table it shares with the renders before it answer as a dict would,
and a finished render's times are never changed by the renders after it."""

from __future__ import annotations

import random

from haptic.templating.context import QuietTimes


def test_generations_of_changes_answer_as_dicts_do() -> None:
    rng = random.Random(7)
    names = [f"b{i}" for i in range(300)]
    model: dict[str, float] = {}
    times = QuietTimes()
    times.update((n, 1.0) for n in names[:200])
    model.update((n, 1.0) for n in names[:200])
    finished: list[tuple[QuietTimes, dict[str, float]]] = []
    for generation in range(60):
        finished.append((times, dict(model)))
        times = QuietTimes.following(times)
        for _ in range(rng.randrange(1, 40)):
            name = rng.choice(names)
            if rng.random() < 0.5:
                times[name] = model[name] = float(generation)
            else:
                assert times.pop(name, None) == model.pop(name, None)
        assert dict(times.items()) == model and len(times) == len(model)
        assert all((n in times) == (n in model) and times.get(n) == model.get(n) for n in names)
    for kept, was in finished:  # what later renders did changed none of the earlier ones
        assert dict(kept.items()) == was and len(kept) == len(was)


def test_a_plain_table_is_followed_without_a_copy_and_left_as_it_was() -> None:
    table = {"a": 1.0, "b": 2.0}
    times = QuietTimes.following(table)
    times.pop("a")
    times["c"] = 3.0
    assert dict(times.items()) == {"b": 2.0, "c": 3.0} and table == {"a": 1.0, "b": 2.0}
    assert times == {"b": 2.0, "c": 3.0}
