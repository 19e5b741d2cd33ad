"""Structured logging: logfmt-style text lines on stdout, level from ``LOG_LEVEL``, changeable at runtime.

Every line looks like::

    time=2025-01-01T00:00:05.000Z level=info logger=haptic.component.deployer msg="deployment done" pods=3

Use ``get_logger(__name__)`` and pass fields as keywords; they are rendered as ``key=value``. Fields
whose name looks secret (password, token, secret, ...) are always rendered as ``<redacted>``.

Example::

    setup_logging()                    # once, at process start (LOG_LEVEL=debug|info|...)
    log = get_logger(__name__)
    log.info("deployment done", pods=3, correlation_id=event.correlation_id)
    apply_config_level("DEBUG")        # spec.logging.level: wins over LOG_LEVEL while set

Under the simulator pass ``time_source=clock.wall`` so lines carry virtual timestamps.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import IO, Any, Final

TRACE: Final = 5
logging.addLevelName(TRACE, "TRACE")

_LEVELS: Final = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
_SECRET_HINTS: Final = ("password", "passwd", "secret", "token", "authorization", "private_key", "credential")
_ROOT: Final = "haptic"
_FIELDS_ATTR: Final = "haptic_fields"
_HANDLER_NAME: Final = "haptic-logfmt"


def parse_level(level: str | int) -> int:
    """``"debug"``/``"INFO"``/``"warn"``/``"trace"`` or a number to a logging level; ValueError otherwise."""
    if isinstance(level, int):
        return level
    key = level.strip().lower()
    if key in _LEVELS:
        return _LEVELS[key]
    if key.isdigit():
        return int(key)
    raise ValueError(f"unknown log level {level!r} (expected one of: trace, debug, info, warn, error)")


def _is_secret(key: str) -> bool:
    lowered = key.lower()
    return any(hint in lowered for hint in _SECRET_HINTS)


def _quote(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    if text and not any(c in text for c in ' "=\n\t\\') :
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


class LogfmtFormatter(logging.Formatter):
    """Renders records as ``key=value`` pairs, fields from ``get_logger`` keywords included."""

    def __init__(self, time_source: Callable[[], float] | None = None) -> None:
        super().__init__()
        self.time_source = time_source

    def format(self, record: logging.LogRecord) -> str:
        created = record.created
        if self.time_source is not None:
            # A clock tied to an event loop raises outside of it: keep the record's own time then.
            with contextlib.suppress(RuntimeError):
                created = self.time_source()
        stamp = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        parts = [
            f"time={stamp}",
            f"level={record.levelname.lower()}",
            f"logger={record.name}",
            f"msg={_quote(record.getMessage())}",
        ]
        fields: Mapping[str, Any] | None = getattr(record, _FIELDS_ATTR, None)
        if fields:
            for key, value in fields.items():
                parts.append(f"{key}={'<redacted>' if _is_secret(key) else _quote(value)}")
        if record.exc_info:
            parts.append(f"error={_quote(self.formatException(record.exc_info))}")
        return " ".join(parts)


class StructuredLogger:
    """A thin wrapper over ``logging.Logger`` taking fields as keyword arguments."""

    __slots__ = ("logger",)

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def log(self, level: int, msg: str, *, exc_info: bool | BaseException = False, **fields: Any) -> None:
        if self.logger.isEnabledFor(level):
            self.logger.log(level, msg, exc_info=exc_info, extra={_FIELDS_ATTR: fields}, stacklevel=3)

    def trace(self, msg: str, **fields: Any) -> None:
        self.log(TRACE, msg, **fields)

    def debug(self, msg: str, **fields: Any) -> None:
        self.log(logging.DEBUG, msg, **fields)

    def info(self, msg: str, **fields: Any) -> None:
        self.log(logging.INFO, msg, **fields)

    def warning(self, msg: str, **fields: Any) -> None:
        self.log(logging.WARNING, msg, **fields)

    def error(self, msg: str, *, exc_info: bool | BaseException = False, **fields: Any) -> None:
        self.log(logging.ERROR, msg, exc_info=exc_info, **fields)

    def exception(self, msg: str, **fields: Any) -> None:
        self.log(logging.ERROR, msg, exc_info=True, **fields)

    def is_enabled_for(self, level: int) -> bool:
        return self.logger.isEnabledFor(level)


def get_logger(name: str) -> StructuredLogger:
    return StructuredLogger(logging.getLogger(name))


def setup_logging(level: str | int | None = None, *, stream: IO[str] | None = None,
                  time_source: Callable[[], float] | None = None) -> logging.Handler:
    """Send ``haptic`` (and ``simulator``) logs to ``stream`` (stdout) as logfmt. Idempotent.

    ``level`` defaults to ``$LOG_LEVEL``, else ``info``. Returns the installed handler.
    """
    if level is None:
        level = os.environ.get("LOG_LEVEL", "info") or "info"
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(LogfmtFormatter(time_source))
    for name in (_ROOT, "simulator"):
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            if old.get_name() == _HANDLER_NAME:
                logger.removeHandler(old)
        logger.addHandler(handler)
        logger.propagate = False
    set_level(level)
    _levels.process = parse_level(level)
    _levels.from_config = False
    return handler


class _Levels:
    # process: the level chosen at start (--log-level / LOG_LEVEL), None before setup_logging;
    # from_config: whether spec.logging.level currently overrides it.
    process: int | None = None
    from_config: bool = False


_levels = _Levels()


def apply_config_level(level: str) -> None:
    """Applies ``spec.logging.level`` with the original's precedence: a level set in the config wins
    over the process level; emptying it again restores the process level (``--log-level``, else
    ``LOG_LEVEL``, else info). An empty level never touches loggers the config did not change.
    """
    if level.strip():
        set_level(level.strip().lower())
        _levels.from_config = True
    elif _levels.from_config:
        set_level(_levels.process if _levels.process is not None else logging.NOTSET)
        _levels.from_config = False


def set_level(level: str | int) -> None:
    """Change the level of every ``haptic``/``simulator`` logger at runtime."""
    value = parse_level(level)
    for name in (_ROOT, "simulator"):
        logging.getLogger(name).setLevel(value)


def get_level() -> str:
    value = logging.getLogger(_ROOT).getEffectiveLevel()
    return logging.getLevelName(value).lower()
