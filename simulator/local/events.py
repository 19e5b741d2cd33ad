"""The controller's domain events, read back from its log.

``haptic run`` logs every domain event on the ``haptic.events`` logger as
``msg="<type> key=value ..."``; ``events_from_log`` turns those lines into records (time, type,
fields) so that a caller outside the controller process can assert on what happened.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


@dataclass(frozen=True)
class LoggedEvent:
    time: str
    type: str
    fields: dict[str, str] = field(default_factory=dict)


def _logfmt(line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, raw in _FIELD.findall(line):
        if raw.startswith('"'):
            try:
                out[key] = shlex.split(raw)[0] if raw != '""' else ""
            except ValueError:
                out[key] = raw.strip('"')
        else:
            out[key] = raw
    return out


def events_from_log(lines: Iterable[str], logger: str = "haptic.events") -> list[LoggedEvent]:
    """The domain events among ``lines`` (other lines are skipped), in log order."""
    events = []
    for line in lines:
        record = _logfmt(line)
        if record.get("logger") != logger or not record.get("msg"):
            continue
        message = record["msg"]
        event_type, _, rest = message.partition(" ")
        events.append(LoggedEvent(record.get("time", ""), event_type, _logfmt(rest)))
    return events
