"""Splitting haproxy.cfg lines into words the way HAProxy does."""

from __future__ import annotations

import pytest

from haptic.dataplane import ConfigParseError, parse_config
from haptic.dataplane.tokenizer import tokenize_line, unquote


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("", []),
        ("   \t  ", []),
        ("# just a comment", []),
        ("  balance   roundrobin  ", ["balance", "roundrobin"]),
        ("\tmode\thttp\t# trailing", ["mode", "http"]),
        ("server s1 10.0.0.1:80#no space before comment", ["server", "s1", "10.0.0.1:80"]),
        ('http-request set-header X "a b"', ["http-request", "set-header", "X", '"a b"']),
        ("http-request set-header X 'a # b'", ["http-request", "set-header", "X", "'a # b'"]),
        ('log-format "%ci:%cp [%t]"', ["log-format", '"%ci:%cp [%t]"']),
        ('x "say \\"hi\\""', ["x", '"say \\"hi\\""']),
        ("x a\\ b", ["x", "a\\ b"]),
        ("x a\\#b", ["x", "a\\#b"]),
        ('x pre"mid dle"post', ["x", 'pre"mid dle"post']),
    ],
)
def test_tokenize(raw: str, words: list[str]) -> None:
    assert tokenize_line(raw, 1) == words


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("plain", "plain"),
        ('"a b"', "a b"),
        ("'a \\n b'", "a \\n b"),
        ('"a\\nb"', "a\nb"),
        ('"tab\\there"', "tab\there"),
        ('"q\\"q"', 'q"q'),
        ("a\\ b", "a b"),
        ('pre"mid"post', "premidpost"),
    ],
)
def test_unquote(word: str, value: str) -> None:
    assert unquote(word) == value


@pytest.mark.parametrize("raw", ['x "open', "x 'open", "x trailing\\"])
def test_unterminated(raw: str) -> None:
    with pytest.raises(ConfigParseError) as info:
        tokenize_line(raw, 7)
    assert info.value.line == 7


def test_known_directives_may_start_at_column_zero() -> None:
    text = (
        "global\ndaemon\ntune.bufsize 32768\nssl-default-bind-ciphers HIGH\n"
        "backend web\nbalance first\nserver s 10.0.0.1:80\n"
    )
    config = parse_config(text)
    assert config.global_section is not None
    keywords = [d.keyword for d in config.global_section.directives]
    assert keywords == ["daemon", "tune.bufsize", "ssl-default-bind-ciphers"]
    assert list(config.backends["web"].servers) == ["s"]


def test_unknown_word_at_column_zero_is_a_misspelt_section() -> None:
    with pytest.raises(ConfigParseError) as info:
        parse_config("global\n  daemon\nfrontent fe\n  bind :80\n")
    assert info.value.line == 3
    assert "unknown section keyword 'frontent'" in str(info.value)
