"""``-k`` expressions as pytest reads them: words matched as substrings of the id, ``and``/``or``/``not``, ``()``."""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


class SelectionError(ValueError):
    pass


def compile_selection(expression: str) -> Callable[[str], bool]:
    """A predicate over cell ids (case-insensitive). Raises ``SelectionError`` on a malformed expression."""
    tokens = _TOKEN.findall(expression)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise SelectionError(f"-k {expression!r}: unexpected end")
        pos += 1
        token: str = tokens[pos - 1]
        return token

    def disjunction() -> Callable[[str], bool]:
        left = conjunction()
        while peek() == "or":
            take()
            left = _either(left, conjunction())
        return left

    def conjunction() -> Callable[[str], bool]:
        left = negation()
        while peek() == "and":
            take()
            left = _both(left, negation())
        return left

    def negation() -> Callable[[str], bool]:
        if peek() == "not":
            take()
            inner = negation()
            return lambda s: not inner(s)
        return atom()

    def atom() -> Callable[[str], bool]:
        token = take()
        if token == "(":
            inner = disjunction()
            if take() != ")":
                raise SelectionError(f"-k {expression!r}: missing ')'")
            return inner
        if token in (")", "and", "or", "not"):
            raise SelectionError(f"-k {expression!r}: unexpected {token!r}")
        word = token.lower()
        return lambda s: word in s.lower()

    if not tokens:
        return lambda s: True
    predicate = disjunction()
    if pos != len(tokens):
        raise SelectionError(f"-k {expression!r}: unexpected {tokens[pos]!r}")
    return predicate


def _either(a: Callable[[str], bool], b: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda s: a(s) or b(s)


def _both(a: Callable[[str], bool], b: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda s: a(s) and b(s)
