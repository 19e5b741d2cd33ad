"""Where a render spends its time, per template: for ``haptic validate --verbose`` and ``haptic benchmark``.

Jinja2 renders a template, and every ``{% include %}`` of a snippet, by iterating the compiled template's
``root_render_func`` generator. ``RenderProfile`` wraps that generator on each compiled template of one
engine for the duration of a ``with`` block and adds up the wall time spent inside it. The figure of a
template is inclusive (a snippet's includes count for it too), as the original's ``--profile-includes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from haptic.templating.engine import TemplateEngine

RenderFunc = Callable[[Any], Iterator[str]]


@dataclass
class TemplateTiming:
    name: str
    calls: int = 0
    seconds: float = 0.0


@dataclass
class RenderProfile:
    """Inclusive wall time per template name while active (``with RenderProfile(engine) as profile:``)."""

    engine: TemplateEngine
    clock: Callable[[], float] = time.perf_counter
    timings: dict[str, TemplateTiming] = field(default_factory=dict)
    _originals: list[tuple[Any, RenderFunc]] = field(default_factory=list)

    def __enter__(self) -> RenderProfile:
        for name in self.engine.template_names:
            template = self.engine.env.get_template(name)
            original: RenderFunc = template.root_render_func
            self._originals.append((template, original))
            template.root_render_func = self._timed(name, original)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for template, original in self._originals:
            template.root_render_func = original
        self._originals.clear()

    def _timed(self, name: str, original: RenderFunc) -> RenderFunc:
        timing = self.timings.setdefault(name, TemplateTiming(name))
        clock = self.clock

        def timed(context: Any) -> Iterator[str]:
            timing.calls += 1
            inner = original(context)
            while True:
                # Only the time inside the generator counts: between two chunks the caller is working.
                started = clock()
                try:
                    chunk = next(inner)
                except StopIteration:
                    timing.seconds += clock() - started
                    return
                timing.seconds += clock() - started
                yield chunk

        return timed

    def top(self, count: int = 20) -> list[TemplateTiming]:
        """The ``count`` templates that took longest (those rendered at least once)."""
        rendered = [t for t in self.timings.values() if t.calls]
        return sorted(rendered, key=lambda t: (-t.seconds, t.name))[:count]


def format_timings(timings: list[TemplateTiming], indent: str = "    ") -> list[str]:
    """``  12.3 ms  x4  backends-servers`` lines."""
    return [f"{indent}{t.seconds * 1000:8.1f} ms  x{t.calls:<4d} {t.name}" for t in timings]
