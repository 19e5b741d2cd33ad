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

from haptic.core.text_cuts import BACKENDS, changed_pieces, cut
from haptic.templating.current_config import CurrentBackend, CurrentConfig, parse_current_config

__all__ = ["CurrentConfigCache"]



class CurrentConfigCache:
    def __init__(self) -> None:
        #: the pieces of the last text (the head, then what follows each ``backend`` cut) and their backends
        self._pieces: list[str] = []
        self._found: list[dict[str, CurrentBackend]] = []
        self._last: CurrentConfig | None = None
        self._unique = False  # no backend name in two pieces of the last text
        self.parsed_pieces = 0

    def read(self, text: str | None) -> CurrentConfig | None:
        """The ``CurrentConfig`` of ``text`` (the same object again for the same text)."""
        if not text or text.isspace():  # no 4 MB copy of a deployed config to test it
            return None
        if self._last is not None and (self._last.text is text or self._last.text == text):
            return self._last
        # 10,000 backends: the pieces are compared, kept and merged at C speed; only changed ones are parsed
        pieces = cut(text, BACKENDS)  # the structural check cut the same text already
        old = self._pieces
        found: list[dict[str, CurrentBackend] | None]
        last = self._last
        if len(pieces) == len(old) and last is not None:  # the same backends in the same places: compared in place
            fresh = {i: _parse_piece(pieces, i) for i in changed_pieces(old, pieces) or ()}
            self.parsed_pieces += len(fresh)
            quick = self._in_place(text, pieces, fresh, last)
            if quick is not None:
                return quick
            found = list(self._found)
            for i, backends_of in fresh.items():
                found[i] = backends_of
        else:
            fresh = {}
            known = dict(zip(old[1:], self._found[1:], strict=True))
            found = [self._found[0] if old and old[0] == pieces[0] else None, *map(known.get, pieces[1:])]
        parsed: set[str] = set(chain.from_iterable(fresh.values()))
        for i in compress(range(len(pieces)), map(is_, found, repeat(None))):
            found[i] = _parse_piece(pieces, i)
            parsed.update(found[i] or ())
            self.parsed_pieces += 1
        done = cast("list[dict[str, CurrentBackend]]", found)
        self._pieces, self._found = pieces, done
        backends = dict(chain.from_iterable(map(dict.items, done)))
        config = CurrentConfig(backends, text)
        self._unique = len(backends) == sum(map(len, done))
        if last is not None and self._unique:
            # the kept pieces' backends are the last config's objects (no name defined twice): what differs is
            # what was parsed and what went (none went when the counts add up)
            added = parsed - last.backends.keys()
            gone = last.backends.keys() - backends.keys() if len(backends) != len(last.backends) + len(added) else ()
            config.delta[:] = [last, frozenset(parsed) | frozenset(gone)]
        if last is not None:
            last.delta.clear()
        self._last = config
        return config

    def _in_place(self, text: str, pieces: list[str], parsed: dict[int, dict[str, CurrentBackend]],
                  last: CurrentConfig) -> CurrentConfig | None:
        """The changed pieces' backends (``parsed``) put in place of the last config's (a copy: the same order as
        a merge of every piece), when each defines the backends it defined before and no name is defined twice;
        else None."""
        if not self._unique or 0 in parsed:
            return None
        if any(list(found) != list(self._found[i]) for i, found in parsed.items()):
            return None
        backends = dict(last.backends)
        names: set[str] = set()
        for i, found in parsed.items():
            backends.update(found)
            names.update(found)
            self._found[i] = found
        self._pieces = pieces
        config = CurrentConfig(backends, text)
        config.delta[:] = [last, frozenset(names)]
        last.delta.clear()
        self._last = config
        return config


def _parse_piece(pieces: list[str], i: int) -> dict[str, CurrentBackend]:
    """The backends of one piece of a text cut at its ``backend`` lines (the head is the text before the first)."""
    return parse_current_config(pieces[i] if i == 0 else "backend " + pieces[i]).backends
