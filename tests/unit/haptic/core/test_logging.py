"""Structured logging: logfmt lines, LOG_LEVEL, runtime level changes, secret redaction."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from haptic.core.logging import get_level, get_logger, parse_level, set_level, setup_logging


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    monkeypatch.setenv("LOG_LEVEL", "warn")
    out = io.StringIO()
    handler = setup_logging(stream=out, time_source=lambda: 1_735_689_605.25)
    yield out
    for name in ("haptic", "simulator"):
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)


def test_level_comes_from_log_level_env(stream: io.StringIO) -> None:
    log = get_logger("haptic.test")
    log.info("hidden")
    log.warning("shown")
    assert get_level() == "warning"
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert 'msg=shown' in lines[0]


def test_lines_are_logfmt_with_fields_quoted_when_needed(stream: io.StringIO) -> None:
    get_logger("haptic.core.test").error("deploy failed", pod="haproxy-0", error='bad "thing"\nhere', count=3)
    line = stream.getvalue().strip()
    assert line == (
        'time=2025-01-01T00:00:05.250Z level=error logger=haptic.core.test msg="deploy failed" pod=haproxy-0 '
        'error="bad \\"thing\\"\\nhere" count=3'
    )


def test_level_changes_at_runtime(stream: io.StringIO) -> None:
    log = get_logger("haptic.runtime")
    log.debug("before")
    set_level("debug")
    log.debug("after")
    set_level("TRACE")
    log.trace("deep")
    text = stream.getvalue()
    assert "before" not in text
    assert "msg=after" in text
    assert "level=trace" in text and "msg=deep" in text


def test_secret_looking_fields_are_redacted(stream: io.StringIO) -> None:
    get_logger("haptic.x").warning("login", user="admin", password="hunter2", api_token="abc", dataplane_secret="s")
    text = stream.getvalue()
    assert "hunter2" not in text and "abc" not in text and "=s " not in text + " "
    assert "user=admin" in text
    assert text.count("<redacted>") == 3


def test_exceptions_are_rendered_on_one_line(stream: io.StringIO) -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        get_logger("haptic.x").exception("failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert "ValueError: boom" in lines[0]


def test_plain_stdlib_loggers_under_haptic_use_the_format(stream: io.StringIO) -> None:
    logging.getLogger("haptic.core.bus").warning("subscriber %s full", "x")
    assert 'msg="subscriber x full"' in stream.getvalue()


def test_parse_level_rejects_unknown_names() -> None:
    assert parse_level("WARN") == logging.WARNING
    assert parse_level(10) == logging.DEBUG
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        parse_level("loud")
