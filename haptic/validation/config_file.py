"""Reading a ``HAProxyTemplateConfig`` from a YAML file for the CLI: libraries expanded, templates compiled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from haptic.config.errors import ConfigError, FieldProblem
from haptic.config.models import HAProxyTemplateConfig, load_config
from haptic.templating.engine import TemplateEngine, compile_templates
from haptic.templating.errors import TemplateCompileError
from haptic.templating.libraries import LibraryError, expand_libraries

KIND = "HAProxyTemplateConfig"


def _pick_document(path: Path, documents: list[Any]) -> Any:
    candidates = [d for d in documents if isinstance(d, dict)]
    if len(candidates) == 1:
        return candidates[0]
    typed = [d for d in candidates if d.get("kind") == KIND]
    if len(typed) == 1:
        return typed[0]
    raise ConfigError(str(path), [FieldProblem("", f"expected one {KIND} document, found {len(typed)}")])


def read_config_document(path: Path) -> dict[str, Any]:
    """The HAProxyTemplateConfig document of ``path`` as written (full CR or bare spec; multi-document
    files pick the HAProxyTemplateConfig), libraries not expanded."""
    try:
        documents = list(yaml.safe_load_all(path.read_text()))
    except OSError as exc:
        raise ConfigError(str(path), [FieldProblem("", f"cannot read: {exc.strerror or exc}")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [FieldProblem("", f"not valid YAML: {exc}")]) from None
    document: dict[str, Any] = _pick_document(path, documents)
    return document


def read_config_file(path: Path) -> HAProxyTemplateConfig:
    """Parses ``path`` (full CR or bare spec; multi-document files pick the HAProxyTemplateConfig)."""
    document = read_config_document(path)
    try:
        expanded = expand_libraries(document)
    except LibraryError as exc:
        raise ConfigError(str(path), [FieldProblem("metadata.annotations", str(exc))]) from None
    name = None if "spec" in expanded else str(path)
    return load_config(expanded, name=name)


def compile_config(config: HAProxyTemplateConfig, *, object_name: str) -> TemplateEngine:
    """Compiles every template; a compile error becomes a ``ConfigError`` naming field and line."""
    try:
        return compile_templates(config.spec)
    except TemplateCompileError as exc:
        field = f"spec.{exc.field}" if exc.field else "spec"
        where = f"template {exc.template!r}" + (f" line {exc.line}" if exc.line else "") if exc.template else ""
        message = f"{where}: {exc.message}" if where else exc.message
        raise ConfigError(object_name, [FieldProblem(field, message)]) from None


def object_name(config: HAProxyTemplateConfig, path: Path) -> str:
    name = config.metadata.name if config.metadata is not None else None
    return f"{KIND} {name}" if name else str(path)
