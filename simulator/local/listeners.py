"""Where to send a request in a config as pushed: the wildcard ``bind``s of its frontends, plain or TLS.

A traffic check names a listener by frontend name (``listener: https``) or leaves it to the scheme:
``https`` goes to the first frontend with a wildcard ``bind ... ssl``. Ports are the config's own; each
local pod's haproxy binds them on the pod's address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SECTION = re.compile(r"^(global|defaults|frontend|backend|listen|resolvers|peers|userlist|program|"
                      r"http-errors|ring|cache|mailers|crt-store|traces)\b[ \t]*(\S*)", re.MULTILINE)
_WILDCARD_BIND = re.compile(r"^[ \t]*bind[ \t]+(?:\*|0\.0\.0\.0|\[::\]|::)?:(\d+)(?P<rest>[^\n]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Listener:
    frontend: str
    port: int
    tls: bool


def listeners(config: str) -> list[Listener]:
    """Every wildcard bind of the ``frontend``/``listen`` sections, in config order."""
    marks = list(_SECTION.finditer(config))
    found = []
    for n, mark in enumerate(marks):
        if mark[1] not in ("frontend", "listen"):
            continue
        body = config[mark.end():marks[n + 1].start() if n + 1 < len(marks) else len(config)]
        for bind in _WILDCARD_BIND.finditer(body):
            found.append(Listener(mark[2], int(bind[1]), re.search(r"\bssl\b", bind["rest"]) is not None))
    return found


def listener_port(config: str, *, tls: bool, name: str | None = None) -> int | None:
    """The port of frontend ``name`` (its bind of the right kind), or of the first TLS frontend; None
    when there is none."""
    for listener in listeners(config):
        if listener.tls == tls and (name is None or listener.frontend == name):
            return listener.port
    return None


def describe(config: str) -> str:
    found = listeners(config)
    return ", ".join(f"{b.frontend}:{b.port}{' ssl' if b.tls else ''}" for b in found) or "no wildcard binds"
