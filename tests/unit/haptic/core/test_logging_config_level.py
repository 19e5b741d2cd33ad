"""``spec.logging.level`` against the process level (--log-level / LOG_LEVEL), as the original orders them."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from haptic.core.logging import apply_config_level, get_level, setup_logging


@pytest.fixture
def process_level_warn(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LOG_LEVEL", "warn")
    handler = setup_logging(stream=io.StringIO())
    yield
    apply_config_level("")
    for name in ("haptic", "simulator"):
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)


def test_a_config_level_wins_over_the_process_level(process_level_warn: None) -> None:
    assert get_level() == "warning"
    apply_config_level("DEBUG")
    assert get_level() == "debug"
    apply_config_level("TRACE")
    assert get_level() == "trace"


def test_an_empty_config_level_restores_the_process_level(process_level_warn: None) -> None:
    apply_config_level("ERROR")
    assert get_level() == "error"
    apply_config_level("")
    assert get_level() == "warning"


def test_an_empty_config_level_leaves_a_runtime_change_alone(process_level_warn: None) -> None:
    logging.getLogger("haptic").setLevel(logging.INFO)
    apply_config_level("")
    assert get_level() == "info"
