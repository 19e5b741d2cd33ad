"""Event base: type registry, JSON-safe rendering, secrets and digests."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest
from blake3 import blake3

from haptic.core import SECRET, Event, event_types, to_json_safe

from ._events import Login, Ping


def test_every_event_class_is_registered_by_its_type_name() -> None:
    types = event_types()
    assert types["test.ping"] is Ping
    assert types["test.login"] is Login
    assert list(types) == sorted(types)


def test_duplicate_type_names_are_rejected() -> None:
    with pytest.raises(TypeError, match=r"'test\.ping' is used by both"):

        @dataclass(frozen=True, slots=True)
        class Impostor(Event):
            type: ClassVar[str] = "test.ping"


def test_to_dict_renders_type_envelope_and_fields() -> None:
    event = Ping(n=3, correlation_id="c")
    assert event.to_dict() == {
        "type": "test.ping", "event_id": "", "correlation_id": "c", "causation_id": "", "timestamp": 0.0, "n": 3,
    }


def test_secret_fields_are_never_rendered_and_not_in_repr() -> None:
    event = Login(user="admin", password="hunter2", config="global\n")
    rendered = json.dumps(event.to_dict())
    assert "hunter2" not in rendered
    assert "password" not in event.to_dict()
    assert "hunter2" not in repr(event)
    assert event.to_dict()["config"] == {"blake3": blake3(b"global\n").hexdigest(), "bytes": 7}


class Color(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Inner:
    name: str
    token: str = field(default="", metadata=SECRET)


class Opaque:
    def __repr__(self) -> str:
        return "Opaque(password=leaked)"


class PydanticLike:
    def model_dump(self, mode: str) -> dict[str, object]:
        assert mode == "json"
        return {"a": {1, 2}}


def test_to_json_safe_handles_common_types_deterministically() -> None:
    value = {
        "set": {"b", "a", "c"},
        "tuple": (1, 2.5, None, True),
        "enum": Color.RED,
        "when": datetime(2025, 1, 1, tzinfo=UTC),
        "delta": timedelta(seconds=90),
        "bytes": b"abc",
        "inner": Inner(name="x", token="t0ps3cret"),
        "opaque": Opaque(),
        "model": PydanticLike(),
        "nan": float("nan"),
        "event": Ping(n=1),
        3: "int key",
    }
    result = to_json_safe(value)
    assert result == {
        "set": ["a", "b", "c"],
        "tuple": [1, 2.5, None, True],
        "enum": "red",
        "when": "2025-01-01T00:00:00+00:00",
        "delta": 90.0,
        "bytes": {"blake3": blake3(b"abc").hexdigest(), "bytes": 3},
        "inner": {"name": "x"},
        "opaque": "<Opaque>",
        "model": {"a": [1, 2]},
        "nan": "nan",
        "event": Ping(n=1).to_dict(),
        "3": "int key",
    }
    text = json.dumps(result)
    assert "t0ps3cret" not in text
    assert "leaked" not in text
