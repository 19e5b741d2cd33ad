"""Template libraries shipped as package data (``<name>.yaml``: a ``HAProxyTemplateConfig`` spec fragment).

A config selects libraries with the annotation ``haproxy-haptic.org/template-libraries: ingress``
(comma-separated, merged in order). ``expand_libraries`` merges them *under* the config's own spec:
maps of named things (``watchedResources``, ``templateSnippets``, ``maps``, ``files``,
``sslCertificates``, ``validationTests``, ``extraContext``) are merged key by key with the config
winning, ``haproxyConfig`` comes from the config when it has one, ignore-fields are unioned. A library
marked ``haproxyConfigIsFallback: true`` (the ``gateway`` library) brings its ``haproxyConfig`` only when
no library before it did, and loses it to any library after it: it plugs into the others' skeleton
through snippets. A library with ``extends: [names]`` (the ``nginx`` and ``haproxytech`` dialect libraries)
brings those libraries first, unless they are already selected. Call it on the raw object before
``haptic.config.load_config``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from haptic.names import LIBRARIES_ANNOTATION

_FALLBACK = "haproxyConfigIsFallback"
_EXTENDS = "extends"
_KEYED = ("watchedResources", "templateSnippets", "maps", "files", "sslCertificates", "validationTests")


class LibraryError(ValueError):
    """An unknown library name or a library file that is not a spec fragment."""


def available_libraries() -> list[str]:
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".yaml")
    )


def load_library(name: str) -> dict[str, Any]:
    """The spec fragment of library ``name``."""
    if name not in available_libraries():
        raise LibraryError(f"unknown template library {name!r} (available: {', '.join(available_libraries())})")
    data = yaml.safe_load(resources.files(__name__).joinpath(f"{name}.yaml").read_text())
    if not isinstance(data, dict):
        raise LibraryError(f"template library {name!r} is not a mapping")
    return data


def merge_fragment(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` (the config) over ``base`` (a library), with the rules described above."""
    result = copy.deepcopy(dict(base))
    for key, value in override.items():
        if key in _KEYED and isinstance(value, Mapping):
            merged = dict(result.get(key) or {})
            merged.update(copy.deepcopy(dict(value)))
            result[key] = merged
        elif key == "templatingSettings" and isinstance(value, Mapping):
            settings = dict(result.get(key) or {})
            for sub, sub_value in value.items():
                if sub == "extraContext" and isinstance(sub_value, Mapping):
                    settings[sub] = {**(settings.get(sub) or {}), **copy.deepcopy(dict(sub_value))}
                else:
                    settings[sub] = copy.deepcopy(sub_value)
            result[key] = settings
        elif key == "watchedResourcesIgnoreFields" and isinstance(value, list):
            seen = list(result.get(key) or [])
            result[key] = seen + [v for v in value if v not in seen]
        else:
            result[key] = copy.deepcopy(value)
    return result


def library_names(obj: Mapping[str, Any]) -> list[str]:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    annotations = (metadata or {}).get("annotations") or {} if isinstance(metadata, Mapping) else {}
    raw = annotations.get(LIBRARIES_ANNOTATION, "") if isinstance(annotations, Mapping) else ""
    return [name.strip() for name in str(raw).split(",") if name.strip()]


def with_bases(names: list[str]) -> list[str]:
    """``names`` with the libraries each one extends placed before it (each library once, first place wins)."""
    ordered: list[str] = []

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in ordered:
            return
        if name in chain:
            raise LibraryError(f"template library {name!r} extends itself (through {' → '.join(chain)})")
        for base in load_library(name).get(_EXTENDS) or []:
            visit(str(base), (*chain, name))
        ordered.append(name)

    for name in names:
        visit(name, ())
    return ordered


def expand_libraries(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a full ``HAProxyTemplateConfig`` object with its annotated libraries merged in."""
    names = with_bases(library_names(obj))
    result = copy.deepcopy(dict(obj))
    if not names or not isinstance(result.get("spec"), Mapping):
        return result
    base: dict[str, Any] = {}
    fallback: Any = None
    for name in names:
        fragment = load_library(name)
        fragment.pop(_EXTENDS, None)
        if fragment.pop(_FALLBACK, False) and "haproxyConfig" in fragment:
            fallback = fragment.pop("haproxyConfig") if "haproxyConfig" not in base else None
            fragment.pop("haproxyConfig", None)
        base = merge_fragment(base, fragment)
    if fallback is not None and "haproxyConfig" not in base:
        base["haproxyConfig"] = fallback
    result["spec"] = merge_fragment(base, result["spec"])
    return result
