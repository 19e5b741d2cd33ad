"""Creating objects from YAML (files or text), CRDs first so that their custom resources resolve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from haptic.k8s.api import JSON, ApiError

from .store import FakeKubeAPI
from .validation import yaml_error


def _documents(text: str, source: str) -> list[JSON]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise ApiError(400, "BadRequest", f"{source}: invalid YAML: {yaml_error(exc)}") from exc
    out: list[JSON] = []
    for index, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise ApiError(400, "BadRequest", f"{source}: document {index} is not a mapping")
        if doc.get("kind", "").endswith("List") and isinstance(doc.get("items"), list):
            out.extend(doc["items"])
        else:
            out.append(doc)
    return out


def load_documents(api: FakeKubeAPI, text: str, source: str = "<text>") -> list[JSON]:
    """Creates every object of a multi-document YAML text; ``status`` is kept (written as the status
    subresource would). Errors name the source and the object."""
    docs = _documents(text, source)
    docs.sort(key=lambda d: 0 if d.get("kind") == "Namespace" else 1 if d.get("kind") == "CustomResourceDefinition"
              else 2)
    created: list[JSON] = []
    for doc in docs:
        api_version, kind = doc.get("apiVersion"), doc.get("kind")
        name = (doc.get("metadata") or {}).get("name") or (doc.get("metadata") or {}).get("generateName")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise ApiError(400, "BadRequest", f"{source}: object {name!r} needs apiVersion and kind")
        rt = api.types.by_kind(api_version, kind)
        if rt is None:
            raise ApiError(404, "NotFound", f"{source}: no resource type serves {kind} in {api_version} "
                                            f"(object {name!r}); apply its CustomResourceDefinition first")
        namespace = (doc.get("metadata") or {}).get("namespace")
        try:
            created.append(api.create(rt, namespace, doc, keep_status=True))
        except ApiError as err:
            err.message = f"{source}: {kind} {name!r}: {err.message}"
            raise
    return created


def load_yaml(api: FakeKubeAPI, text_or_path: str | Path) -> list[JSON]:
    """Creates the objects of a YAML file (a ``Path`` or an existing file name) or of YAML text."""
    if isinstance(text_or_path, Path):
        return load_documents(api, text_or_path.read_text(), str(text_or_path))
    candidate: Any = text_or_path
    if "\n" not in candidate and len(candidate) < 4096 and Path(candidate).is_file():
        return load_documents(api, Path(candidate).read_text(), candidate)
    return load_documents(api, text_or_path)
