"""``sha256_hex``: SHA-256 of a text's UTF-8; a large text that comes again (the object, or an equal one) is
not hashed again."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from haptic.core.digests import sha256_hex


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> Any:
        sizes.append(len(data))
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", counting)  # the module digests hashes with
    return sizes


def test_is_the_sha256_of_the_utf8() -> None:
    for text in ("", "a b\n", "é" * 10, "x" * (1 << 17), "ü" * (1 << 17)):
        assert sha256_hex(text) == hashlib.sha256(text.encode()).hexdigest()


def test_a_large_text_that_comes_again_is_hashed_once(hashed: list[int]) -> None:
    text = "".join(f"h{i}.example ns{i % 7}\n" for i in range(20_000))
    first = sha256_hex(text)
    again = "".join(f"h{i}.example ns{i % 7}\n" for i in range(20_000))  # equal, another object
    assert again is not text
    assert sha256_hex(text) == sha256_hex(again) == first
    assert hashed == [len(text)]
    changed = again.replace("h5.example", "h5.exampld")
    assert sha256_hex(changed) != first
    assert hashed == [len(text), len(changed)]


def test_small_texts_are_hashed_every_time(hashed: list[int]) -> None:
    sha256_hex("a b\n")
    sha256_hex("a b\n")
    assert hashed == [4, 4]
