"""``cut``: a text's pieces once per text (by identity, else by value) and separator, as ``str.split`` gives them."""

from __future__ import annotations

import random

import pytest

from haptic.core.text_cuts import cut, split_like


def test_a_text_is_cut_once_and_an_equal_text_object_gets_its_pieces() -> None:
    text = "".join(f"backend b{i}\n    server s 10.0.0.{i}:80\n" for i in range(5))
    first = cut(text, "\nbackend ")
    assert first == text.split("\nbackend ") and cut(text, "\nbackend ") is first
    assert cut(text, "\n") == text.split("\n")
    equal = "".join([text[:10], text[10:]])
    assert equal == text and equal is not text
    assert cut(equal, "\nbackend ") is first  # the deployed config read back: the rendered text's pieces
    other = text.replace("10.0.0.3", "10.0.0.9")
    assert len(other) == len(text) and cut(other, "\nbackend ") == other.split("\nbackend ")
    assert cut(text, "\n") is not first  # another separator is another answer
    for i in range(10):  # older texts drop out; their answers stay right
        cut(f"x{i}\nbackend y", "\nbackend ")
    assert cut(text, "\nbackend ") == text.split("\nbackend ")


def _edited(rng: random.Random, pieces: list[str], separator: str) -> str:
    """``separator.join(pieces)`` after a few random edits: pieces replaced, dropped, added; characters (the
    separator's among them) put in, taken out, anywhere."""
    out = list(pieces)
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice(["replace", "drop", "add", "chars", "many"])
        k = rng.randrange(len(out)) if out else 0
        if kind == "replace" and out:
            out[k] = out[k].replace("1", "7") + rng.choice(["", separator[:3], "x"])
        elif kind == "drop" and out:
            del out[k]
        elif kind == "many":  # more pieces in a row than the walk follows
            for j in range(k, min(k + 20, len(out))):
                out[j] += "z"
        elif kind == "add":
            out.insert(k, f"new{rng.randint(0, 9)}")
    text = separator.join(out)
    if rng.random() < 0.5 and text:
        at = rng.randrange(len(text))
        cut_out = rng.randint(0, 12)
        text = text[:at] + rng.choice(["", separator, separator[1:], separator[:-1], "q"]) + text[at + cut_out:]
    return text


@pytest.mark.parametrize("separator", ["\nbackend ", "\n", "ab", "aa", "abab", "x"])
def test_a_text_split_like_another_gives_what_split_gives(separator: str) -> None:
    rng = random.Random(separator)
    for _ in range(1500):
        earlier = "".join(rng.choice(["a", "b", "", "x1", "backend ", "\n", "ab", "ba", separator])
                          * rng.randint(0, 3) + str(rng.randint(0, 20)) for _ in range(rng.randint(0, 60)))
        pieces = earlier.split(separator)
        text = _edited(rng, pieces, separator)
        assert split_like(text, pieces, separator) == text.split(separator), (text, pieces)


def test_the_pieces_a_change_leaves_as_they_were_are_the_earlier_texts_objects() -> None:
    pieces = [f"b{i}\n    server s 10.0.0.{i}:80" for i in range(2000)]
    pieces[0] = "global\n    maxconn 10"
    old = "\nbackend ".join(pieces)
    new = old.replace("10.0.0.1000:80", "10.0.0.1000:81")
    assert new != old
    found = split_like(new, old.split("\nbackend "), "\nbackend ")
    assert found == new.split("\nbackend ")
    earlier = cut(old, "\nbackend ")
    again = cut(new, "\nbackend ")  # cut from the text cut before it
    assert again == new.split("\nbackend ")
    assert [i for i, (a, b) in enumerate(zip(earlier, again, strict=True)) if a is not b] == [1000]
