"""``CurrentConfigCache``: the deployed config as templates see it (``currentConfig``, server slots),
re-read incrementally.

The coordinator hands every render the config it rendered last (what is being deployed), so each
render keeps endpoints in their slots. Reading 3,000 backends from scratch on every EndpointSlice
change cost more than the rest of the controller's share; here the text is cut at its ``backend``
lines and only pieces that changed since the previous read are parsed again.
"""

from __future__ import annotations

from haptic.templating.current_config import CurrentBackend, CurrentConfig, parse_current_config

__all__ = ["CurrentConfigCache"]

_CUT = "\nbackend "


class CurrentConfigCache:
    def __init__(self) -> None:
        self._pieces: dict[str, dict[str, CurrentBackend]] = {}
        self._last: CurrentConfig | None = None
        self.parsed_pieces = 0

    def read(self, text: str | None) -> CurrentConfig | None:
        """The ``CurrentConfig`` of ``text`` (the same object again for the same text)."""
        if text is None or not text.strip():
            return None
        if self._last is not None and self._last.text is text:
            return self._last
        head, *rest = text.split(_CUT)
        pieces = [head, *("backend " + piece for piece in rest)]
        kept: dict[str, dict[str, CurrentBackend]] = {}
        backends: dict[str, CurrentBackend] = {}
        for piece in pieces:
            found = kept.get(piece)
            if found is None:
                found = self._pieces.get(piece)
            if found is None:
                found = parse_current_config(piece).backends
                self.parsed_pieces += 1
            kept[piece] = found
            backends.update(found)
        self._pieces = kept
        self._last = CurrentConfig(backends, text)
        return self._last
