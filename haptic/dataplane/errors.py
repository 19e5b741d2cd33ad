"""Errors raised while reading HAProxy configuration text."""

from __future__ import annotations


class ConfigParseError(ValueError):
    """A haproxy.cfg that cannot be parsed; ``line`` is 1-based (0 when no line applies)."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}" if line > 0 else message)

    def __reduce__(self) -> tuple[type[ConfigParseError], tuple[int, str]]:
        return (type(self), (self.line, self.message))
