"""Small helpers to render a template string in tests."""

from __future__ import annotations

from typing import Any

from haptic.templating.engine import RenderInputs, RenderResult, TemplateEngine, TemplateFile, TemplateSet


class ListStore:
    """A minimal store indexed by (namespace, name) for engine tests that do not need ResourceStore."""

    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = sorted(objects, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def list(self) -> list[dict[str, Any]]:
        return list(self.objects)

    def fetch(self, *keys: str) -> list[dict[str, Any]]:
        out = []
        for obj in self.objects:
            ident = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            if ident[: len(keys)] == tuple(keys):
                out.append(obj)
        return out

    def get_single(self, *keys: str) -> dict[str, Any] | None:
        found = self.fetch(*keys)
        return found[0] if len(found) == 1 else None

    def __len__(self) -> int:
        return len(self.objects)


def engine_for(source: str, **kwargs: Any) -> TemplateEngine:
    snippets = kwargs.pop("snippets", {})
    maps = {k: TemplateFile(v) for k, v in kwargs.pop("maps", {}).items()}
    return TemplateEngine(TemplateSet(TemplateFile(source), snippets=snippets, maps=maps), **kwargs)


def render(source: str, **context: Any) -> str:
    return render_result(source, **context).config


def render_result(source: str, **context: Any) -> RenderResult:
    engine = engine_for(source)
    return engine.render(RenderInputs(extra_context=context))
