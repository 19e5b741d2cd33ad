"""The original's template functions that Jinja2 lacks: hashing, hex, sprintf, time (haptic/templating/functions.py)."""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from haptic.templating import functions as fn
from haptic.templating.engine import RenderInputs
from haptic.templating.errors import TemplateRenderError
from tests.unit.haptic.templating.helpers import engine_for, render

# 2024-02-29T13:05:09.250Z: a leap day, afternoon (12-hour forms differ), a fraction.
WALL = datetime(2024, 2, 29, 13, 5, 9, 250_000, tzinfo=UTC).timestamp()


def render_at(source: str, wall: float | None = WALL) -> str:
    return engine_for(source).render(RenderInputs(wall_time=wall)).config


def test_hashes_match_hashlib_as_functions_and_filters() -> None:
    out = render('{{ sha1("a") }} {{ "a" | sha1 }} {{ sha256("a") }} {{ md5("a") }}')
    sha1 = hashlib.sha1(b"a").hexdigest()
    assert out == f"{sha1} {sha1} {hashlib.sha256(b'a').hexdigest()} {hashlib.md5(b'a').hexdigest()}"


def test_hmac_takes_the_message_then_the_key() -> None:
    out = render('{{ hmacSHA256("msg", "key") }}|{{ "msg" | hmac_sha256("key") }}|{{ hmac_sha1("msg", "key") }}'
                 '|{{ hmacSHA1("msg", "key") }}')
    want256 = hmac.new(b"key", b"msg", hashlib.sha256).hexdigest()
    want1 = hmac.new(b"key", b"msg", hashlib.sha1).hexdigest()
    assert out == f"{want256}|{want256}|{want1}|{want1}"


def test_hex_encodes_strings_and_integers() -> None:
    assert render('{{ hex("hi") }} {{ 255 | hex }} {{ hex(-16) }} {{ hex("é") }}') == "6869 ff -10 c3a9"


def test_hex_refuses_booleans() -> None:
    with pytest.raises(TemplateRenderError, match="hex"):
        render("{{ hex(true) }}")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('sprintf("%s-%d", "be", 7)', "be-7"),
        ('sprintf("%05d|%-4s|%4s|", 42, "ab", "cd")', "00042|ab  |  cd|"),
        ('sprintf("%.2f %x %X %#x %o %b", 3.14159, 255, 255, 255, 8, 5)', "3.14 ff FF 0xff 10 101"),
        ('sprintf("[%-5d][%5d][%+d][%05d][%-05d][% d]", 42, 42, 42, -42, 7, 3)',
         "[42   ][   42][+42][-0042][7    ][ 3]"),
        ('sprintf("[%08.3f][%-8.2f][%+.1f][%#o][%#08x]", -3.14159, 2.5, 2, 8, 255)',
         "[-003.142][2.50    ][+2.0][010][0x0000ff]"),
        ('sprintf("%q %v %v %t", "a\\"b", true, none, false)', '"a\\"b" true <nil> false'),
        ('sprintf("%v", [1, "a"])', "[1 a]"),
        ('sprintf("100%% %s", "up")', "100% up"),
        ('sprintf("%d %d", 1)', "1 %!d(MISSING)"),
        ('sprintf("%d", 1, "x")', "1%!(EXTRA str=x)"),
        ('sprintf("%d", "x")', "%!d(str=x)"),
        ('sprintf("%.3s", "abcdef")', "abc"),
        ('sprint("a", 1, 2, "b")', "a1 2b"),
    ],
)
def test_sprintf_follows_go_fmt(call: str, expected: str) -> None:
    assert render("{{ " + call + " }}") == expected


def test_sprintf_widths_and_output_are_bounded() -> None:
    with pytest.raises(TemplateRenderError, match="larger than 1000"):
        render('{{ sprintf("%99999s", "x") }}')
    with pytest.raises(ValueError, match="larger than"):
        fn.sprintf("%s", "x" * (fn.MAX_OUTPUT + 1))
    with pytest.raises(ValueError, match="larger than"):
        fn.hex_encode("x" * fn.MAX_OUTPUT)


def test_now_is_the_render_clock_not_the_host_clock() -> None:
    assert render_at("{{ now() | format_time }}") == "2024-02-29T13:05:09Z"
    later = WALL + 86_400 * 366
    assert render_at('{{ format_time(now(), "2006-01-02") }}', later) == "2025-03-01"


def test_now_without_a_clock_fails_clearly() -> None:
    with pytest.raises(TemplateRenderError, match="no clock"):
        render_at("{{ now() }}", None)


def test_format_time_understands_go_layouts() -> None:
    layout = "Monday, 02-Jan-06 03:04:05.000 PM -07:00 MST|January _2 2006 15h|1/2 3:4:5 pm|Z0700"
    out = render_at('{{ now() | format_time("' + layout + '") }}')
    assert out == "Thursday, 29-Feb-24 01:05:09.250 PM +00:00 UTC|February 29 2024 13h|2/29 1:5:9 pm|Z"


def test_format_time_keeps_the_offset_of_a_zoned_time() -> None:
    t = datetime(2024, 1, 5, 8, 0, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))
    assert fn.format_time(t, "2006-01-02T15:04:05Z07:00 -0700") == "2024-01-05T08:00:00-05:30 -0530"


def test_unix_time_and_parse_time_round_trip() -> None:
    out = render('{{ unixTime(86400) | format_time }} {{ unix_time(0) | format_time("2006") }} '
                 '{{ parseTime("2006-01-02T15:04:05Z07:00", "2024-05-06T07:08:09+02:00") | format_time }} '
                 '{{ parse_time("02 Jan 2006 15:04", "03 Mar 2021 10:11") | format_time }}')
    assert out == "1970-01-02T00:00:00Z 1970 2024-05-06T07:08:09+02:00 2021-03-03T10:11:00Z"


def test_parse_time_refuses_text_not_matching_the_layout() -> None:
    with pytest.raises(TemplateRenderError, match="does not match layout"):
        render('{{ parse_time("2006-01-02", "yesterday") }}')


def test_times_compare_and_subtract_in_templates() -> None:
    src = '{% set t = parse_time("2006-01-02", "2024-02-28") %}{{ (now() - t).days }} {{ now() > t }}'
    assert render_at(src) == "1 True"


def test_every_function_is_covered() -> None:
    # From this file's text, not from what the other tests ran: under pytest-xdist they may run in
    # another worker process, which made a set filled at run time flaky.
    source = Path(__file__).read_text()
    used = {name for name in fn.FUNCTIONS if re.search(rf"(\b{name}\(|\|\s*{name}\b)", source)}
    assert set(fn.FUNCTIONS) <= used, sorted(set(fn.FUNCTIONS) - used)
    assert set(fn.FUNCTION_FILTERS) <= set(fn.FUNCTIONS)
