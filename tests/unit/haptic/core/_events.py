"""Events used by the core tests (the core knows no domain events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from haptic.core import DIGEST, SECRET, Event, Request, Response


@dataclass(frozen=True, slots=True)
class Ping(Event):
    type: ClassVar[str] = "test.ping"
    n: int = 0


@dataclass(frozen=True, slots=True)
class Pong(Event):
    type: ClassVar[str] = "test.pong"
    n: int = 0


@dataclass(frozen=True, slots=True)
class LoudPing(Ping):
    type: ClassVar[str] = "test.ping.loud"


@dataclass(frozen=True, slots=True)
class Login(Event):
    type: ClassVar[str] = "test.login"
    user: str
    password: str = field(default="", repr=False, metadata=SECRET)
    config: str = field(default="", metadata=DIGEST)


@dataclass(frozen=True, slots=True)
class Check(Request):
    type: ClassVar[str] = "test.check.request"
    what: str = ""


@dataclass(frozen=True, slots=True)
class CheckAnswer(Response):
    type: ClassVar[str] = "test.check.response"
    ok: bool = True
