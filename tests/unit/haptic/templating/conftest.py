"""Each test starts with the process-wide render memos empty, so which path a test takes (memo hit or not) does
not depend on the tests that ran before it in the same worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from haptic.templating import engine, ingress_lines, list_memo, statuses
from haptic.templating.gateway import model


@pytest.fixture(autouse=True)
def _fresh_render_memos(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(list_memo, "_LAST_CALLS", {})
    monkeypatch.setattr(engine, "_CARRIED", engine._Carried())
    monkeypatch.setattr(ingress_lines, "_PLANS", type(ingress_lines._PLANS)())
    for name in ("_LAST", "_VERDICTS", "_BACKENDS"):
        monkeypatch.setattr(model, name, {})
    for name in ("_DECLARED", "_DECLARED_ALL"):
        monkeypatch.setattr(statuses, name, type(getattr(statuses, name))())
    yield
