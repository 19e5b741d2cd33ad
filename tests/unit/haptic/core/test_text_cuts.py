"""``cut``: a text's pieces once per text (by identity, else by value) and separator, as ``str.split`` gives them."""

from __future__ import annotations

from haptic.core.text_cuts import cut


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
