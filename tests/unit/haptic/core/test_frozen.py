"""``frozen_instance`` builds what the frozen dataclass's own ``__init__`` builds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from haptic.core.frozen import frozen_instance


@dataclass(frozen=True, order=True)
class _Point:
    x: int
    label: str = ""


def test_the_instance_equals_hashes_orders_and_stays_frozen_as_the_constructors() -> None:
    built = frozen_instance(_Point, x=1, label="a")
    assert built == _Point(1, "a") and hash(built) == hash(_Point(1, "a"))
    assert frozen_instance(_Point, x=0, label="z") < built
    assert dataclasses.asdict(built) == {"x": 1, "label": "a"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.x = 2  # type: ignore[misc]
