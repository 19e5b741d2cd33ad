"""``cut``: a text's pieces once per text (by identity, else by value) and separator, as ``str.split`` gives them."""

from __future__ import annotations

import random

import pytest

from haptic.core.text_cuts import changed_pieces, cut, split_like


def test_a_text_is_cut_once_and_an_equal_text_object_gets_its_pieces() -> None:
    text = "".join(f"backend b{i}\n    server s 10.0.{i // 250}.{i % 250}:80\n" for i in range(3000))
    first = cut(text, "\nbackend ")
    assert first == text.split("\nbackend ") and cut(text, "\nbackend ") is first
    assert cut(text, "\n") == text.split("\n")
    equal = "".join([text[:10], text[10:]])
    assert equal == text and equal is not text
    assert cut(equal, "\nbackend ") is first  # the deployed config read back: the rendered text's pieces
    other = text.replace("10.0.0.3:", "10.0.0.9:")
    assert len(other) == len(text) and cut(other, "\nbackend ") == other.split("\nbackend ")
    assert cut(text, "\n") is not first  # another separator is another answer
    for i in range(10):  # older texts drop out; their answers stay right
        cut(f"x{i}\nbackend y" * 10000, "\nbackend ")
    assert cut(text, "\nbackend ") == text.split("\nbackend ")
    small = "backend a\n    server s 10.0.0.1:80\n"
    assert cut(small, "\nbackend ") == small.split("\nbackend ") and cut(small, "\nbackend ") is not cut(
        small, "\nbackend ")  # split whole each time: not kept


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


def _config_text(pieces: list[str]) -> str:
    return "\nbackend ".join(pieces)


@pytest.mark.parametrize("seed", range(40))
def test_the_pieces_two_cuts_of_one_lineage_differ_in_are_those_a_full_comparison_finds(seed: int) -> None:
    """Texts of a change and the changes after it, each edited from one before it (or coming again as an earlier
    text): wherever ``changed_pieces`` answers, it answers what comparing every piece gives; it answers between a
    cut and the one it was made from, either way round, and between two cuts made from one."""
    rng = random.Random(seed)
    base = ["global\n    maxconn 10"] + [f"b{i}\n    server s 10.0.{i // 250}.{i % 250}:80" for i in range(1, 3000)]
    texts = [_config_text(base)]
    cuts = [cut(texts[0], "\nbackend ")]
    for _ in range(12):
        choice = rng.random()
        if choice < 0.2:
            text = "".join(rng.choice(texts))  # an earlier text again, as another object
        else:
            pieces = list(cut(rng.choice(texts[-3:]), "\nbackend "))
            for _ in range(rng.randint(1, 5)):
                k = rng.randrange(1, len(pieces))
                pieces[k] = pieces[k].replace(":80", f":{rng.randint(81, 99)}")
            if choice > 0.93:
                pieces.insert(rng.randrange(1, len(pieces)), "added\n    server s 1.2.3.4:80")
            text = _config_text(pieces)
        texts.append(text)
        cuts.append(cut(text, "\nbackend "))
    answered = 0
    for a in cuts:
        for b in cuts:
            found = changed_pieces(a, b)
            if len(a) != len(b):
                assert found is None
                continue
            if found is not None:
                answered += 1
                assert found == [k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    assert answered > len(cuts)


def test_a_change_and_a_text_that_comes_again_are_answered_either_way_round() -> None:
    """The sequence of an endpoint change and its undoing: B cut from A, C from B, then A's text again (answered
    with A's first cut, an ancestor of C's): every pair is answered, through their common ancestor."""
    pieces = ["global"] + [f"b{i}\n    server s 10.0.{i // 250}.{i % 250}:80" for i in range(1, 5000)]
    a_text = _config_text(pieces)
    a = cut(a_text, "\nbackend ")
    b = cut(a_text.replace("10.0.0.7:80", "10.0.0.7:81"), "\nbackend ")
    c = cut(a_text.replace("10.0.0.7:80", "10.0.0.7:81").replace("10.0.3.9:80", "10.0.3.9:81"), "\nbackend ")
    again = cut("".join(a_text), "\nbackend ")
    assert again is a
    assert changed_pieces(a, b) == changed_pieces(b, a) == [7]
    assert changed_pieces(b, c) == changed_pieces(c, b) == [759]
    assert changed_pieces(c, again) == [7, 759]
    d = cut(a_text.replace("10.0.5.1:80", "10.0.5.1:82"), "\nbackend ")  # made from A again: C's sibling
    assert changed_pieces(c, d) == [7, 759, 1251]


def test_cuts_split_whole_have_no_lineage_and_are_compared_piece_by_piece() -> None:
    from haptic.core import text_cuts

    small = _config_text([f"x{i}" for i in range(20)])  # below the size worth finding a stretch in: split whole
    one, other = cut(small, "\nbackend "), cut(small.replace("x3", "x9"), "\nbackend ")
    assert text_cuts._by_lineage(one, other) is None
    assert changed_pieces(one, other) == [3]
    assert changed_pieces(one, one) == []
    assert changed_pieces(one, one[:-1]) is None  # not as many pieces: they do not line up
