"""Splitting one haproxy.cfg line into words, the way HAProxy's own line parser does.

Words keep their raw spelling (quotes and backslash escapes included) so that a rendered line is
byte-faithful; only the whitespace between words and trailing comments are dropped.
"""

from __future__ import annotations

from haptic.dataplane.errors import ConfigParseError

_SPECIAL = frozenset("\"'\\#")


def tokenize_line(raw: str, line_number: int) -> list[str]:
    """Return the words of ``raw`` without its comment; ``[]`` for blank and comment-only lines."""
    # Hot path: the vast majority of generated lines hold no quote, escape or comment character.
    if "#" in raw or '"' in raw or "'" in raw or "\\" in raw:
        return tokenize_special(raw, line_number)
    return raw.split()


def tokenize_special(raw: str, line_number: int) -> list[str]:
    words: list[str] = []
    current: list[str] = []
    in_word = False
    quote = ""
    i = 0
    n = len(raw)
    while i < n:
        ch = raw[i]
        if quote:
            current.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < n:
                current.append(raw[i + 1])
                i += 2
                continue
            if ch == quote:
                quote = ""
            i += 1
            continue
        if ch == "\\":
            if i + 1 >= n:
                raise ConfigParseError(line_number, "line ends with a dangling backslash escape")
            current.append(ch)
            current.append(raw[i + 1])
            in_word = True
            i += 2
            continue
        if ch in "\"'":
            quote = ch
            current.append(ch)
            in_word = True
            i += 1
            continue
        if ch == "#":
            break
        if ch.isspace():
            if in_word:
                words.append("".join(current))
                current = []
                in_word = False
            i += 1
            continue
        current.append(ch)
        in_word = True
        i += 1
    if quote:
        raise ConfigParseError(line_number, f"unmatched {quote} quote")
    if in_word:
        words.append("".join(current))
    return words


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def unquote(word: str) -> str:
    """The value HAProxy sees for a raw word: quotes removed and backslash escapes resolved."""
    if not _SPECIAL.intersection(word):
        return word
    out: list[str] = []
    quote = ""
    i = 0
    n = len(word)
    while i < n:
        ch = word[i]
        if ch == "\\" and quote != "'" and i + 1 < n:
            i += 1
            out.append(_ESCAPES.get(word[i], word[i]))
        elif quote:
            if ch == quote:
                quote = ""
            else:
                out.append(ch)
        elif ch in "\"'":
            quote = ch
        else:
            out.append(ch)
        i += 1
    return "".join(out)
