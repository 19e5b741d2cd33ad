"""The event base classes: an envelope every event carries, and JSON-safe rendering for traces.

An event is a frozen dataclass subclassing ``Event`` with a stable ``type`` name. The envelope
(``event_id``, ``correlation_id``, ``causation_id``, ``timestamp``) is left empty by whoever builds
the event and is sealed by ``EventBus.publish``, exactly once, from the bus's id source and clock.

Field metadata controls rendering in ``to_dict()``:

- ``field(metadata=SECRET)``: never rendered (and hidden from ``repr``, use with ``repr=False``).
- ``field(metadata=DIGEST)``: long text rendered as ``{"blake3": ..., "bytes": n}``.
- ``field(metadata=OMIT)``: bulky objects (parsed configs, whole resources) left out.

Example::

    @dataclass(frozen=True, slots=True)
    class Pinged(Event):
        type: ClassVar[str] = "demo.pinged"
        target: str

    Pinged(target="a").to_dict()  # {"type": "demo.pinged", "event_id": "", ..., "target": "a"}
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from blake3 import blake3

from haptic.core.identity import Recent

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]

#: Field metadata: the value is never rendered in ``to_dict()``.
SECRET: Mapping[str, Any] = {"secret": True}
#: Field metadata: text/bytes rendered as a digest and a size instead of the content.
DIGEST: Mapping[str, Any] = {"digest": True}
#: Field metadata: left out of ``to_dict()`` because it is bulky and other fields summarize it.
OMIT: Mapping[str, Any] = {"omit": True}

_ENVELOPE = ("event_id", "correlation_id", "causation_id", "timestamp")
_REGISTRY: dict[str, type[Event]] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event: a stable ``type`` name plus the envelope set on publish."""

    type: ClassVar[str] = "event"

    event_id: str = ""
    correlation_id: str = ""
    causation_id: str = ""
    timestamp: float = 0.0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super(Event, cls).__init_subclass__(**kwargs)  # zero-arg super() breaks under slots=True
        name = cls.__dict__.get("type")
        if not isinstance(name, str):
            return
        previous = _REGISTRY.get(name)
        # dataclass(slots=True) re-creates the class, so the same class registers twice.
        if previous is not None and previous.__qualname__ != cls.__qualname__:
            raise TypeError(f"event type {name!r} is used by both {previous.__qualname__} and {cls.__qualname__}")
        _REGISTRY[name] = cls

    def to_dict(self) -> dict[str, JsonValue]:
        """The event as a JSON-safe dict: type, envelope and fields; secrets left out."""
        out: dict[str, JsonValue] = {
            "type": self.type,
            "event_id": self.event_id,
            "correlation_id": self.correlation_id,
            "causation_id": self.causation_id,
            "timestamp": self.timestamp,
        }
        for f in dataclasses.fields(self):
            if f.name in _ENVELOPE or f.metadata.get("secret") or f.metadata.get("omit"):
                continue
            value = getattr(self, f.name)
            out[f.name] = digest(value) if f.metadata.get("digest") else to_json_safe(value)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Request(Event):
    """A scatter-gather request (see ``EventBus.request``); its id is its ``event_id``."""

    @property
    def request_id(self) -> str:
        return self.event_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Response(Event):
    """An answer to a ``Request``: names the request and the responder."""

    request_id: str
    responder: str


def event_types() -> dict[str, type[Event]]:
    """Every event class defined so far, by type name (sorted)."""
    return dict(sorted(_REGISTRY.items()))


#: the digests of the last texts digested: one rendered config is digested by every event log and trace that
#: records the events carrying it
_DIGESTS: Recent[dict[str, JsonValue]] = Recent(8)


def digest(value: object) -> JsonValue:
    """``{"blake3": hex, "bytes": n}`` for text or bytes; other values rendered as usual (BLAKE3, as the content
    checksum, which hands its digest of a rendered config over: one pass over 4 MB, not two)."""
    if isinstance(value, str | bytes):
        data = value
        return dict(_DIGESTS.answer(value, None, lambda: _digest(data.encode() if isinstance(data, str) else data)))
    if isinstance(value, bytearray):
        return _digest(bytes(value))
    return to_json_safe(value)


def _digest(data: bytes) -> dict[str, JsonValue]:
    return {"blake3": blake3(data).hexdigest(), "bytes": len(data)}


def known_digest(text: str, blake3_hex: str, size: int) -> None:
    """Tells ``digest`` what ``text``'s digest is (its BLAKE3 hex and its UTF-8 size), worked out by a caller that
    hashed it anyway (the content checksum of a rendered config): the events carrying that text are then recorded
    without a second pass over it."""
    _DIGESTS.answer(text, None, lambda: {"blake3": blake3_hex, "bytes": size})


def to_json_safe(value: object) -> JsonValue:
    """Convert a value to JSON-safe data, deterministically.

    Dataclasses honour ``SECRET``/``DIGEST`` metadata, pydantic models use ``model_dump(mode="json")``,
    sets are sorted, bytes become a digest, unknown objects become ``"<TypeName>"`` (never ``repr``,
    which could leak a secret).
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, enum.Enum):
        return to_json_safe(value.value)
    if isinstance(value, Event):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, JsonValue] = {}
        for f in dataclasses.fields(value):
            if f.metadata.get("secret") or f.metadata.get("omit"):
                continue
            item = getattr(value, f.name)
            out[f.name] = digest(item) if f.metadata.get("digest") else to_json_safe(item)
        return out
    if isinstance(value, Mapping):
        return {str(k): to_json_safe(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((to_json_safe(v) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [to_json_safe(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return digest(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return to_json_safe(model_dump(mode="json"))
    return f"<{type(value).__name__}>"


__all__ = [
    "DIGEST", "OMIT", "SECRET", "Event", "JsonValue", "Request", "Response", "digest", "event_types", "known_digest",
    "to_json_safe",
]
