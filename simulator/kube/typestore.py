"""The objects of one resource type, their change history and watchers; snapshots and continue tokens."""

from __future__ import annotations

import base64
import binascii
import json
from collections import deque

from haptic.k8s.api import JSON

from .validation import bad_request
from .watch import Watch

Key = tuple[str, str]
# (resourceVersion, type, object after the change, object before it)
Event = tuple[int, str, JSON, JSON | None]


class TypeStore:
    """The objects of one (group, plural), keyed by (namespace, name), with the history of changes."""

    __slots__ = ("floor", "history", "objects", "sorted_keys", "watchers")

    def __init__(self) -> None:
        self.objects: dict[Key, JSON] = {}
        self.history: deque[Event] = deque()
        self.floor = 0  # changes up to this resourceVersion are forgotten
        self.watchers: list[Watch] = []
        self.sorted_keys: list[Key] | None = None

    def ordered(self) -> list[Key]:
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.objects)
        return self.sorted_keys

    def state_at(self, rv: int, current_rv: int) -> tuple[dict[Key, JSON], list[Key]]:
        """The objects as they were at ``rv``, undoing the changes recorded since."""
        if rv >= current_rv:
            return self.objects, self.ordered()
        state = dict(self.objects)
        for event_rv, etype, obj, old in reversed(self.history):
            if event_rv <= rv:
                break
            key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            if etype == "ADDED":
                state.pop(key, None)
            elif old is not None:
                state[key] = old
        return state, sorted(state)


def encode_continue(rv: int, after: Key) -> str:
    raw = json.dumps({"rv": rv, "ns": after[0], "name": after[1]}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_continue(token: str) -> tuple[int, Key]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), (str(data["ns"]), str(data["name"]))
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise bad_request(f"invalid continue token {token!r}: {exc}") from exc
