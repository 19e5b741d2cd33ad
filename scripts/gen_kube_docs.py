"""Writes simulator/kube/data/kube_docs.json: the descriptions of the built-in kinds' models (and of the
models they use) from the official Python client (``kubernetes.client.models.*``), which the fake's
``/openapi/v3`` documents carry so that ``kubectl explain`` shows them.

The fake API must not import the client at run time (import-linter: only ``haptic.live`` does), so it reads
this data file. ``tests/unit/simulator/kube/test_kube_docs.py`` regenerates it in memory and fails when the
installed client describes the models differently: then run ``python scripts/gen_kube_docs.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "simulator" / "kube" / "data" / "kube_docs.json"
_MODEL = re.compile(r"\b((?:[A-Z][a-z]+)?V\d+(?:(?:alpha|beta)\d+)?[A-Z]\w*)\b")


def _class_doc(model: Any) -> str:
    text = (model.__doc__ or "").split("Attributes:")[0]
    return " ".join(line.strip() for line in text.strip().splitlines()).strip()


def _roots(models: Any) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from simulator.kube.openapi import model_candidates
    from simulator.kube.resources import BUILTIN_TYPES

    roots = []
    for rt in BUILTIN_TYPES:
        name = next((n for n in model_candidates(rt) if hasattr(models, n)), None)
        if not rt.custom and name is not None:
            roots.append(name)
    return roots


def describe() -> dict[str, Any]:
    import kubernetes
    from kubernetes.client import models

    out: dict[str, dict[str, str]] = {}
    pending = _roots(models)
    pending += [f"{name}List" for name in pending if hasattr(models, f"{name}List")]
    while pending:
        name = pending.pop()
        if name in out:
            continue
        model = getattr(models, name)
        docs = {"": _class_doc(model)}
        for attribute, json_name in model.attribute_map.items():
            info = model.model_fields.get(attribute)
            if info is not None and info.description:
                docs[json_name] = " ".join(info.description.split())
            pending.extend(m for m in _MODEL.findall(model.openapi_types[attribute]) if hasattr(models, m))
        out[name] = docs
    return {"client": kubernetes.__version__, "models": dict(sorted(out.items()))}


def render() -> str:
    return json.dumps(describe(), indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render())
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
