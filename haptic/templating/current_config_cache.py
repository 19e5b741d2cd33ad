"""``CurrentConfigCache``: the deployed config as templates see it (``currentConfig``, server slots),
re-read incrementally.

The coordinator hands every render the config it rendered last (what is being deployed), so each
render keeps endpoints in their slots. Reading 3,000 backends from scratch on every EndpointSlice
change cost more than the rest of the controller's share; here the text is cut at its ``backend``
lines and only pieces that changed since the previous read are parsed again.
"""

from __future__ import annotations

from itertools import chain, compress, repeat
from operator import is_
from typing import cast

from haptic.templating.current_config import CurrentBackend, CurrentConfig, parse_current_config

__all__ = ["CurrentConfigCache"]

_CUT = "\nbackend "


class CurrentConfigCache:
    def __init__(self) -> None:
        #: the pieces of the last text (what follows each ``backend`` cut, the head as it is) -> their backends
        self._pieces: dict[str, dict[str, CurrentBackend]] = {}
        self._head: tuple[str, dict[str, CurrentBackend]] | None = None
        self._last: CurrentConfig | None = None
        self.parsed_pieces = 0

    def read(self, text: str | None) -> CurrentConfig | None:
        """The ``CurrentConfig`` of ``text`` (the same object again for the same text)."""
        if text is None or not text.strip():
            return None
        if self._last is not None and (self._last.text is text or self._last.text == text):
            return self._last
        # 10,000 backends: the pieces are looked up, joined and merged at C speed; only changed ones are parsed
        pieces = text.split(_CUT)
        found: list[dict[str, CurrentBackend] | None] = list(map(self._pieces.get, pieces))
        found[0] = self._head[1] if self._head is not None and self._head[0] == pieces[0] else None
        parsed: set[str] = set()
        for i in compress(range(len(pieces)), map(is_, found, repeat(None))):
            found[i] = parse_current_config(pieces[i] if i == 0 else "backend " + pieces[i]).backends
            parsed.update(found[i] or ())
            self.parsed_pieces += 1
        done = cast("list[dict[str, CurrentBackend]]", found)
        self._head = (pieces[0], done[0])  # apart: the head is not cut at a backend line
        self._pieces = dict(zip(pieces[1:], done[1:], strict=True))
        last, backends = self._last, dict(chain.from_iterable(map(dict.items, done)))
        config = CurrentConfig(backends, text)
        if last is not None:
            # the kept pieces' backends are the last config's objects: what differs is what was parsed (a name
            # parsed twice may keep neither object) and what went (none went when the counts add up)
            added = parsed - last.backends.keys()
            gone = last.backends.keys() - backends.keys() if len(backends) != len(last.backends) + len(added) else ()
            config.delta[:] = [last, frozenset(parsed) | frozenset(gone)]
            last.delta.clear()
        self._last = config
        return config
