"""Every filter, test and global function available to templates."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest

from haptic.templating import filters as f
from haptic.templating.errors import TemplateFailure, TemplateRenderError
from tests.unit.haptic.templating.helpers import render, render_result

COVERED_FILTERS: set[str] = set()
COVERED_TESTS: set[str] = set()
COVERED_GLOBALS: set[str] = set()


def use(kind: set[str], *names: str) -> None:
    kind.update(names)


ITEMS = [
    {"name": "b", "meta": {"prio": 2, "tags": [1, 2]}},
    {"name": "a", "meta": {"prio": 10, "tags": [1]}},
    {"name": "c", "meta": {}},
]


def test_sort_by_paths_modifiers_and_missing_last() -> None:
    use(COVERED_FILTERS, "sort_by")
    assert [i["name"] for i in f.sort_by(ITEMS, "$.meta.prio")] == ["b", "a", "c"]
    assert [i["name"] for i in f.sort_by(ITEMS, ["$.meta.prio:desc"])] == ["a", "b", "c"]
    assert [i["name"] for i in f.sort_by(ITEMS, ["$.meta.tags | length:desc", "$.name"])] == ["b", "a", "c"]
    assert [i["name"] for i in f.sort_by(ITEMS, ["$.meta.prio:exists", "$.name"])] == ["a", "b", "c"]
    assert [i["name"] for i in ITEMS] == ["b", "a", "c"], "input must not be modified"
    assert render("{{ [3, 1, 2] | sort_by('$') | join(',') }}") == "1,2,3"


def test_glob_match_strings_and_named_mappings() -> None:
    use(COVERED_FILTERS, "glob_match")
    assert f.glob_match(["backends-1", "x", "backends-2"], "backends-*") == ["backends-1", "backends-2"]
    assert f.glob_match(ITEMS, "[ab]") == ITEMS[:2]


def test_with_field_keeps_the_items_whose_field_is_true() -> None:
    use(COVERED_FILTERS, "with_field")
    items = [{"spec": {"tls": [{"hosts": ["a"]}]}}, {"spec": {"tls": []}}, {"spec": None}, {}, "text",
             {"spec": {"tls": {"x": 1}}}]
    assert f.with_field(items, "spec.tls") == [items[0], items[5]]
    assert f.with_field(items, "spec.tls.x") == [items[5]]
    assert render("{{ [{'a': {'b': 1}}, {'a': {}}] | with_field('a.b') | length }}") == "1"


def test_dig_fallback_coalesce_and_default_if_nil() -> None:
    use(COVERED_FILTERS, "dig", "fallback", "default_if_nil")
    use(COVERED_GLOBALS, "dig", "fallback", "coalesce")
    obj = {"a": {"b": [{"c": 5}]}}
    assert f.dig(obj, "a", "b", 0, "c") == 5
    assert f.dig(obj, "a", "x", "c") is None
    assert f.dig(obj, "a", "b", 7) is None
    assert f.fallback(None, "d") == "d" and f.fallback("", "d") == "d" and f.fallback(0, "d") == 0
    assert f.coalesce(None, "", "x", "y") == "x" and f.coalesce() is None
    out = render(
        "{{ extraContext | dig('a', 'b') }}|{{ dig(extraContext, 'z') | fallback('none') }}|"
        "{{ coalesce(extraContext.q, 'c') }}|{{ fallback(extraContext.q, 1) }}|{{ none | default_if_nil('n') }}",
        a={"b": "deep"},
    )
    assert out == "deep|none|c|1|n"


def test_merge_keys_sort_strings_append() -> None:
    use(COVERED_FILTERS, "merge", "keys", "sort_strings", "append")
    use(COVERED_GLOBALS, "merge")
    assert f.merge({"a": 1, "b": 1}, {"b": 2}) == {"a": 1, "b": 2}
    assert f.keys({"b": 1, "a": 2}) == ["a", "b"]
    assert f.sort_strings([3, 1, "2"]) == ["1", "2", "3"]
    base = [1]
    assert f.append(base, 2) == [1, 2] and base == [1]
    out = render("{{ merge({'a': 1}, {'b': 2}) | keys | join(',') }} {{ [1] | append(2) | join(',') }}")
    assert out == "a,b 1,2"
    assert render("{{ {'x': 1} | merge({'y': 2}) | keys | join }}") == "xy"


def test_seq_shard_slice_group_unique() -> None:
    use(COVERED_FILTERS, "shard_slice", "group_by", "unique_by")
    use(COVERED_GLOBALS, "seq", "shard_slice")
    assert f.seq(3) == [0, 1, 2] and f.seq(-1) == [] and len(f.seq(10**9)) == 100_000
    items = list(range(10))
    assert [f.shard_slice(items, i, 3) for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert f.shard_slice([], 0, 2) == []
    assert f.group_by(ITEMS, "$.meta.prio") == {"2": [ITEMS[0]], "10": [ITEMS[1]], "None": [ITEMS[2]]}
    assert f.unique_by([{"k": 1}, {"k": 1}, {"k": 2}], "k") == [{"k": 1}, {"k": 2}]
    assert render("{{ seq(3) | join }}{{ shard_slice([1,2,3,4], 1, 2) | join }}") == "01234"


def test_slices() -> None:
    use(COVERED_FILTERS, "toStringSlice", "to_string_slice", "toSlice")
    assert f.to_string_slice(None) == [] and f.to_string_slice("a") == ["a"] and f.to_string_slice([1, 2]) == ["1", "2"]
    assert f.to_slice(None) == [] and f.to_slice((1,)) == [1] and f.to_slice("x") == ["x"]
    assert (
        render("{{ 'a' | toStringSlice | join }}{{ none | to_string_slice | length }}{{ 5 | toSlice | first }}")
        == "a05"
    )


def test_base64_round_trip_and_invalid_input() -> None:
    use(COVERED_FILTERS, "b64decode", "b64encode")
    encoded = base64.b64encode(b"secret\n").decode()
    assert f.b64decode(encoded) == "secret\n"
    assert f.b64encode("secret\n") == encoded
    with pytest.raises(TemplateFailure, match="invalid base64"):
        f.b64decode("not base64!")
    with pytest.raises(TemplateRenderError, match="b64decode"):
        render("{{ '%%%' | b64decode }}")


def test_string_helpers() -> None:
    use(
        COVERED_FILTERS,
        "strip",
        "strings_split",
        "strings_splitn",
        "strings_contains",
        "strings_replace",
        "strings_lower",
        "strings_trim",
        "basename",
        "tostring",
        "toint",
        "tofloat",
        "ceil",
    )
    use(COVERED_GLOBALS, "join_key")
    strip = f.strip
    assert strip("  x ") == "x" and strip("--x-", "-") == "x"
    assert f.strings_split("a,b", ",") == ["a", "b"]
    assert f.strings_splitn("a,b,c", ",", 2) == ["a", "b,c"]
    assert f.strings_contains("abc", "b") and not f.strings_contains("abc", "d")
    assert f.strings_replace("aa", "a", "b") == "bb"
    assert f.basename("/etc/haproxy/maps/host.map") == "host.map"
    assert f.join_key("_", "a", 1) == "a_1"
    assert f.tostring(None) == "" and f.tostring(True) == "true" and f.tostring(3) == "3"
    assert f.toint("42") == 42 and f.toint("x") == 0 and f.toint(3.9) == 3 and f.toint("x", 7) == 7
    assert f.tofloat("1.5") == 1.5 and f.tofloat(None, 2.0) == 2.0
    assert f.ceil("1.2") == 2
    out = render(
        "{{ ' A ' | strings_trim | strings_lower }}{{ 'x/y' | basename }}{{ 'a b' | strip }}"
        "{{ 'a-b' | strings_split('-') | length }}{{ 'a-b-c' | strings_splitn('-', 2) | last }}"
        "{{ 'abc' | strings_contains('b') }}{{ 'aa' | strings_replace('a', 'c') }}{{ false | tostring }}"
        "{{ '7' | toint + 1 }}{{ '0.5' | tofloat }}{{ 0.1 | ceil }}{{ join_key('-', 'k', 2) }}"
    )
    assert out == "aya b2b-cTrueccfalse80.51k-2"


def test_regex_helpers_use_go_replacement_syntax() -> None:
    use(
        COVERED_FILTERS,
        "regex_search",
        "regex_match",
        "regex_findall",
        "regex_replace",
        "regex_escape",
        "sanitize_regex",
    )
    use(COVERED_GLOBALS, "regex_search", "regex_replace")
    assert f.regex_search("abc123", r"\d+") and not f.regex_search("abc", r"\d")
    assert f.regex_match("abc", "a.c") and not f.regex_match("abcd", "a.c")
    assert f.regex_findall("a1b22", r"\d+") == ["1", "22"]
    assert f.regex_replace("host:8080", r"^(\w+):(\d+)$", "$2/${1}") == "8080/host"
    assert f.regex_replace("a\\b", "a", "x") == "x\\b"
    assert f.regex_escape("a.b*") == r"a\.b\*"
    out = render(
        "{{ 'v1.2' | regex_replace('v(\\\\d)', 'V$1') }} {{ regex_search('ab', '^a') }} {{ 'a.b' | sanitize_regex }}"
    )
    assert out == r"V1.2 True a\.b"


def test_hashing_and_serialisation() -> None:
    use(COVERED_FILTERS, "sha256", "md5", "to_json", "from_json", "to_yaml", "from_yaml", "debug")
    assert f.sha256("a").startswith("ca978112") and f.md5("a") == "0cc175b9c0f1b6a831c399e269772661"
    assert f.to_json({"b": 1, "a": [1]}) == '{"a": [1], "b": 1}'
    assert f.from_json('{"a": 1}') == {"a": 1}
    assert f.to_yaml({"b": 1, "a": 2}) == "a: 2\nb: 1\n"
    assert f.from_yaml("a: [1, 2]") == {"a": [1, 2]}
    assert f.debug({"k": "v"}, "ctx") == '# ctx: {\n# ctx:   "k": "v"\n# ctx: }'
    assert render("{{ {'a': 1} | to_json }}|{{ '[1]' | from_json | first }}") == '{"a": 1}|1'


def test_fail_aborts_with_the_message_and_location() -> None:
    use(COVERED_GLOBALS, "fail")
    with pytest.raises(TemplateFailure) as info:
        render("line one\n{{ fail('custom stop') }}")
    assert info.value.message == "custom stop"
    assert info.value.template == "haproxy.cfg" and info.value.line == 2


def test_first_seen_is_per_render_and_warn_collects() -> None:
    use(COVERED_GLOBALS, "first_seen", "warn")
    source = "{% for x in ['a', 'b', 'a'] %}{{ first_seen('k', x) }} {% endfor %}{{ warn('w1') }}{{ warn('w1') }}"
    result = render_result(source)
    assert result.config == "True True False "
    assert result.warnings == ("w1",)
    assert render_result(source).config == "True True False ", "state must not leak between renders"


def test_nil_and_digit_tests_and_globals() -> None:
    use(COVERED_TESTS, "nil", "digit", "regex_match", "has_prefix", "has_suffix")
    use(COVERED_GLOBALS, "isNil", "is_nil", "isdigit")
    out = render(
        "{{ none is nil }}{{ extraContext.missing is nil }}{{ 1 is nil }}{{ '12' is digit }}{{ 'x1' is digit }}"
        "{{ 'abc' is regex_match('a.c') }}{{ 'abc' is has_prefix('ab') }}{{ 'abc' is has_suffix('bc') }}"
        "{{ isNil(none) }}{{ is_nil('') }}{{ isdigit('5') }}"
    )
    assert out == "TrueTrueFalseTrueFalseTrueTrueTrueTrueFalseTrue"


def test_safety_helpers_exposed_to_templates() -> None:
    use(COVERED_TESTS, "haproxy_token", "hostname", "ingress_path")
    use(COVERED_FILTERS, "unsafe_reasons", "reject_unsafe", "ingress_class")
    use(COVERED_GLOBALS, "unsafe_reasons", "is_haproxy_token")
    out = render(
        "{{ 'a b' is haproxy_token }}{{ 'ab' is haproxy_token }}{{ 'Ex.com' is hostname }}{{ '*.ex.com' is hostname }}"
        "{{ '/a b' is ingress_path }}{{ is_haproxy_token('x#') }}"
    )
    assert out == "FalseTrueFalseTrueFalseFalse"
    good = {"kind": "Ingress", "metadata": {"namespace": "n", "name": "good"}, "spec": {"ingressClassName": "c"}}
    bad = {"kind": "Ingress", "metadata": {"namespace": "n", "name": "bad"}, "spec": {"rules": [{"host": "a b"}]}}
    result = render_result(
        "{{ extraContext.objs | reject_unsafe('ingress') | map(attribute='metadata.name') | join }}"
        "|{{ (extraContext.objs[1] | unsafe_reasons) | length }}|{{ unsafe_reasons(extraContext.objs[0]) | length }}"
        "|{{ extraContext.objs | ingress_class('c') | length }}",
        objs=[good, bad],
    )
    assert result.config == "good|1|0|1"
    assert result.warnings == ("skipping Ingress 'n'/'bad': rules[0].host 'a b' is not a DNS name",)


def test_object_notices_exposed_to_templates() -> None:
    use(COVERED_GLOBALS, "warn", "exclude", "skipped")
    use(COVERED_TESTS, "skipped")
    ing = {"kind": "Ingress", "metadata": {"namespace": "n", "name": "a"}}
    result = render_result(
        "{{ warn('w', extraContext.ing, 'Odd') }}{{ exclude(extraContext.ing, 'Bad', 'no') }}"
        "{{ skipped(extraContext.ing) }}{{ [extraContext.ing] | reject('skipped') | list | length }}",
        ing=ing,
    )
    assert result.config == "False1"
    assert [(n.reason, n.excluded) for n in result.notices] == [("Bad", True), ("Odd", False)]


def test_jinja_builtins_still_available() -> None:
    assert render(
        "{{ 'a\nb' | indent(2, first=True) }}|{{ ['x', 'y'] | join('-') }}|{{ 'aXa' | replace('X', 'b') }}"
    ) == ("  a\n  b|x-y|aba")


def _declared_uses() -> dict[str, set[str]]:
    # Static: the names each test declares with use(...), so the check works under pytest-xdist too.
    tree = ast.parse(Path(__file__).read_text())
    found: dict[str, set[str]] = {"COVERED_FILTERS": set(), "COVERED_TESTS": set(), "COVERED_GLOBALS": set()}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "use":
            kind = node.args[0]
            assert isinstance(kind, ast.Name)
            found[kind.id].update(a.value for a in node.args[1:] if isinstance(a, ast.Constant))
    return found


def test_every_filter_test_and_global_is_covered() -> None:
    declared = _declared_uses()
    assert set(f.FILTERS) <= declared["COVERED_FILTERS"], sorted(set(f.FILTERS) - declared["COVERED_FILTERS"])
    assert set(f.TESTS) <= declared["COVERED_TESTS"], sorted(set(f.TESTS) - declared["COVERED_TESTS"])
    assert set(f.GLOBALS) <= declared["COVERED_GLOBALS"], sorted(set(f.GLOBALS) - declared["COVERED_GLOBALS"])
