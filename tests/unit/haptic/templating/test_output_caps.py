"""Every filter, operator and str method that grows a string refuses, before allocating, a result over
``MAX_OUTPUT_SIZE``: the error names the filter and the limit; ordinary uses keep working."""

from __future__ import annotations

import pytest

from haptic.templating.errors import SandboxViolation
from haptic.templating.output_caps import MAX_JSON_INDENT, MAX_OUTPUT_SIZE
from tests.unit.haptic.templating.helpers import render


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("{{ 'x' | center(999999999) }}", "center"),
        ("{{ 'x' | indent(999999999) }}", "indent"),
        ("{{ ('a\\n' * 1000) | indent('x' * 100000) }}", "indent"),
        ("{{ 'x'.center(999999999) }}", "str.center"),
        ("{{ 'x'.ljust(999999999) }}", "str.ljust"),
        ("{{ 'x'.rjust(999999999) }}", "str.rjust"),
        ("{{ '1'.zfill(999999999) }}", "str.zfill"),
        ("{{ ('\\t' * 100).expandtabs(999999999) }}", "str.expandtabs"),
        ("{{ ('a' * 1000) | replace('', 'b' * 100000) }}", "replace"),
        ("{{ ('a' * 1000).replace('a', 'b' * 100000) }}", "str.replace"),
        ("{{ ('a' * 1000) | strings_replace('a', 'b' * 100000) }}", "strings_replace"),
        ("{{ (['x' * 1000000] * 20) | join }}", "join"),
        ("{{ (['x'] * 20) | join('y' * 1000000) }}", "join"),
        ("{{ '-'.join(['x' * 1000000] * 20) }}", "str.join"),
        ("{{ 'a b c' | wordwrap(1, wrapstring='x' * 9000000) }}", "wordwrap"),
        ("{{ lipsum(999999) }}", "lipsum"),
        ("{{ ('a' * 100000) | regex_replace('', 'b' * 1000) }}", "regex_replace"),
        ("{{ ('a' * 10000) | regex_replace('(a)', '$1' * 2000) }}", "regex_replace"),
        ("{{ 'x' * 100000000 }}", "*"),
        ("{{ ([[0] * 1000000] * 20) | sum(start=[]) | length }}", "sum"),
    ],
)
def test_growing_results_over_the_limit_fail_naming_the_filter_and_limit(source: str, what: str) -> None:
    with pytest.raises(SandboxViolation) as info:
        render(source)
    message = str(info.value)
    assert f"{what}: result too large" in message
    assert f"the limit is {MAX_OUTPUT_SIZE}" in message
    assert "line 1" in message


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("{{ '%999999999s' | format('x') }}", "format"),
        ("{{ '%(a)999999999s' % {'a': 1} }}", "%"),
        ("{{ '{:>999999999}'.format('x') }}", "str.format"),
        ("{{ '{:{}}'.format('x', 999999999) }}", "str.format"),
    ],
)
def test_wide_format_widths_are_refused(source: str, what: str) -> None:
    with pytest.raises(SandboxViolation, match=f"{what}: format width or precision too large"):
        render(source)


def test_json_indent_and_batch_counts_are_capped() -> None:
    with pytest.raises(SandboxViolation, match=f"tojson: indent 999999999 too large, the limit is {MAX_JSON_INDENT}"):
        render("{{ [1, 2] | tojson(999999999) }}")
    with pytest.raises(SandboxViolation, match=f"to_json: indent 999999999 too large, the limit is {MAX_JSON_INDENT}"):
        render("{{ [1, 2] | to_json(999999999) }}")
    with pytest.raises(SandboxViolation, match="batch: count 999999999 too large"):
        render("{{ [1] | batch(999999999, 'x') | list }}")
    with pytest.raises(SandboxViolation, match="slice: count 999999999 too large"):
        render("{{ [1] | slice(999999999) | list }}")


def test_filters_growing_by_a_bounded_factor_are_checked_on_their_result() -> None:
    # Escaping turns each '&' into 5 characters: within the limit before, over it after.
    with pytest.raises(SandboxViolation, match="escape: result too large"):
        render("{{ ('&' * 3000000) | escape }}")


def test_ordinary_uses_of_the_capped_filters_still_work() -> None:
    out = render(
        "{{ 'x' | center(5) }}|{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent('> ', first=true) }}|"
        "{{ 'x'.ljust(3) }}|{{ 'x'.rjust(3) }}|{{ '7'.zfill(3) }}|{{ 'a\tb'.expandtabs(2) }}|"
        "{{ [1, 2] | join(',') }}|{{ [{'n': 'a'}, {'n': 'b'}] | join('/', attribute='n') }}|{{ '-'.join(['a', 'b']) }}|"
        "{{ 'aba' | replace('a', 'c') }}|{{ 'aba' | replace('a', 'c', 1) }}|{{ 'aa'.replace('a', 'bb') }}|"
        "{{ '%s-%03d' | format('a', 3) }}|{{ '{:>3}|{}'.format('x', 2) }}|{{ {'a': 1} | tojson(2) }}|"
        "{{ 'a b c' | wordwrap(1) }}|{{ [1, 2, 3] | batch(2, 0) | list }}|{{ [1, 2, 3] | slice(2) | list }}|"
        "{{ lipsum(1, false, 2, 3) | length > 0 }}|{{ '<&>' | e }}|{{ ('ab' * 3) | upper }}|"
        "{{ [[1], [2, 3]] | sum(start=[]) }}|{{ [1, 2] | sum }}|{{ [{'n': [1]}] | sum(attribute='n', start=[0]) }}"
    )
    assert out == (
        "  x  |a\n  b|> a\n> b|x  |  x|007|a b|1,2|a/b|a-b|cbc|cba|bbbb|a-003|  x|2|{\n  \"a\": 1\n}|"
        "a\nb\nc|[[1, 2], [3, 0]]|[[1, 2], [3]]|True|&lt;&amp;&gt;|ABABAB|[1, 2, 3]|3|[0, 1]"
    )


def test_a_result_exactly_at_the_limit_is_allowed() -> None:
    assert len(render(f"{{{{ 'x' | center({MAX_OUTPUT_SIZE}) }}}}")) == MAX_OUTPUT_SIZE
