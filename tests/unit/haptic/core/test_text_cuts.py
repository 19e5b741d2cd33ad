"""``cut``: a text's pieces once per text object and separator, as ``str.split`` gives them."""

from __future__ import annotations

from haptic.core.text_cuts import cut


def test_a_text_is_cut_once_and_each_text_object_on_its_own() -> None:
    text = "".join(f"backend b{i}\n    server s 10.0.0.{i}:80\n" for i in range(5))
    first = cut(text, "\nbackend ")
    assert first == text.split("\nbackend ") and cut(text, "\nbackend ") is first
    assert cut(text, "\n") == text.split("\n")
    equal = "".join([text[:10], text[10:]])
    assert equal == text and equal is not text
    assert cut(equal, "\nbackend ") == first and cut(equal, "\nbackend ") is not first
    for i in range(10):  # older texts drop out; their answers stay right
        cut(f"x{i}\nbackend y", "\nbackend ")
    assert cut(text, "\nbackend ") == text.split("\nbackend ")
