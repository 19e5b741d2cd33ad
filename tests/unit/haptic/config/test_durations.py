from __future__ import annotations

from datetime import timedelta

import pytest

from haptic.config.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", timedelta(0)),
        ("2s", timedelta(seconds=2)),
        ("1m30s", timedelta(seconds=90)),
        ("1h", timedelta(hours=1)),
        ("2h45m", timedelta(hours=2, minutes=45)),
        ("1.5h", timedelta(minutes=90)),
        ("300ms", timedelta(milliseconds=300)),
        ("10us", timedelta(microseconds=10)),
        ("10µs", timedelta(microseconds=10)),
        ("1500ns", timedelta(microseconds=2)),
        (".5s", timedelta(milliseconds=500)),
        ("1h0m0s", timedelta(hours=1)),
    ],
)
def test_parse(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "s", "2", "2x", "1m30", "-1s", "1 s", "1d", "ms"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(0), "0s"),
        (timedelta(seconds=2), "2s"),
        (timedelta(seconds=90), "1m30s"),
        (timedelta(hours=1), "1h"),
        (timedelta(hours=1, seconds=5), "1h5s"),
        (timedelta(milliseconds=500), "500ms"),
        (timedelta(seconds=1, milliseconds=500), "1.5s"),
        (timedelta(microseconds=7), "7us"),
    ],
)
def test_format_is_parseable_and_exact(value: timedelta, text: str) -> None:
    assert format_duration(value) == text
    assert parse_duration(text) == value
