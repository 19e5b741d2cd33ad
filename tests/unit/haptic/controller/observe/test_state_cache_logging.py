"""The state cache applies ``spec.logging.level`` whenever a config is validated (as the original's)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from haptic.config.models import load_config
from haptic.controller.events import ConfigValidated
from haptic.controller.observe.state_cache import StateCache
from haptic.core.logging import apply_config_level, get_level, setup_logging
from tests.support.controller import make_ctx, started_bus


@pytest.fixture
def info_process() -> Iterator[None]:
    handler = setup_logging("info", stream=io.StringIO())
    yield
    apply_config_level("")
    for name in ("haptic", "simulator"):
        logger = logging.getLogger(name)
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)


async def test_validated_config_sets_and_then_clears_the_log_level(info_process: None) -> None:
    ctx = make_ctx()
    cache = StateCache(started_bus(), ctx)
    obj = ctx.config.to_json()
    obj["spec"]["logging"] = {"level": "debug"}
    await cache.handle(ConfigValidated(version="2", config=load_config(obj)))
    assert get_level() == "debug"
    obj["spec"]["logging"] = {"level": ""}
    await cache.handle(ConfigValidated(version="3", config=load_config(obj)))
    assert get_level() == "info"
