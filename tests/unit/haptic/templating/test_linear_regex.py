"""Template regexes run on RE2: linear time, Go replacement syntax, clear errors for what RE2 refuses."""

from __future__ import annotations

import pytest

from haptic.templating import filters as f
from haptic.templating.errors import TemplateRenderError
from haptic.templating.postprocess import RegexReplace, post_processor_from
from tests.unit.haptic.templating.helpers import render


def test_a_catastrophically_backtracking_pattern_finishes() -> None:
    # Python's re backtracks exponentially here (32 a's and a '!': hours); RE2 answers at once.
    assert render("{{ ('a' * 32 ~ '!') | regex_replace('^(a|a)+$', 'x') }}") == "a" * 32 + "!"
    assert render("{{ ('a' * 32) | regex_replace('^(a|a)+$', 'x') }}") == "x"
    assert render("{{ ('a' * 32 ~ '!') is regex_match('(a|aa)+') }}") == "False"
    assert render("{{ regex_search('a' * 40 ~ '!', '^(a+)+$') }}") == "False"


@pytest.mark.parametrize(
    ("source", "filter_name", "why"),
    [
        ("{{ 'aa' | regex_replace('(a)\\\\1', 'x') }}", "regex_replace", "backreferences"),
        ("{{ 'ab' | regex_search('a(?=b)') }}", "regex_search", "lookaround"),
        ("{{ 'ab' | regex_findall('(?<!a)b') }}", "regex_findall", "lookaround"),
        ("{{ 'ab' is regex_match('(?<=a)b') }}", "regex_match", "lookaround"),
        ("{{ 'ab' | regex_match('(') }}", "regex_match", "invalid regex for RE2 (missing ): ()"),
    ],
)
def test_patterns_re2_cannot_run_fail_naming_the_filter_and_the_reason(source: str, filter_name: str, why: str) -> None:
    with pytest.raises(TemplateRenderError) as info:
        render(source)
    message = str(info.value)
    assert f"{filter_name}: pattern " in message
    assert why in message
    assert "line 1" in message


def test_go_replacement_syntax() -> None:
    assert f.regex_replace("host:8080", r"^(\w+):(\d+)$", "$2/${1}") == "8080/host"
    assert f.regex_replace("k=v", r"(?P<key>\w+)=(?P<val>\w+)", "${val}=${key}") == "v=k"
    assert f.regex_replace("a", "(a)", "$$1 \\1") == "$1 \\1"
    # As in Go: a group the pattern lacks, or one that did not match, expands to nothing.
    assert f.regex_replace("ab", "(a)|(z)", "[$2${nope}$9]") == "[]b"
    assert f.regex_replace("abxd", "x*", "-") == "-a-b--d-"


def test_findall_and_match_follow_the_python_shapes() -> None:
    assert f.regex_findall("a1b22", r"\d+") == ["1", "22"]
    assert f.regex_findall("k1=v1,k2=v2", r"(\w+)=(\w+)") == [("k1", "v1"), ("k2", "v2")]
    assert f.regex_match("abc", "a.c") and not f.regex_match("abcd", "a.c")
    assert f.regex_search("é-1", r"\d") and not f.regex_search("abc", r"\d")


def test_post_processing_runs_on_re2_and_refuses_backreferences() -> None:
    assert RegexReplace(r"^(\s*)server (\S+)", "${1}server x-$2").apply("  server a\nx\n") == "  server x-a\nx\n"
    assert RegexReplace("^(a|a)+$", "x").apply("a" * 32 + "!\n" + "a" * 32) == "a" * 32 + "!\nx"
    spec = {"type": "regex_replace", "params": {"pattern": "(?=x)", "replace": ""}}
    with pytest.raises(ValueError, match=r"where\.params\.pattern: pattern '\(\?=x\)': lookaround"):
        post_processor_from(spec, "where")


def test_post_processing_output_is_capped() -> None:
    with pytest.raises(TemplateRenderError, match="postProcessing regex_replace: result too large"):
        RegexReplace("", "y" * 1000).apply("x" * 20000)
