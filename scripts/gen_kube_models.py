"""Writes simulator/kube/data/kube_models.json: the fields of every built-in kind as the official Python
client's models describe them (``kubernetes.client.models.*``: ``openapi_types``, ``attribute_map``,
required fields).

The fake API must not import the client at run time (import-linter: only ``haptic.live`` does), so it reads
this data file instead. ``tests/unit/simulator/kube/test_kube_models.py`` regenerates it in memory and fails
when the installed client describes the kinds differently: then run ``python scripts/gen_kube_models.py``.

Field types: ``string``, ``integer``, ``number``, ``boolean``, ``date-time``, ``byte`` (base64),
``int-or-string``, ``any`` (free-form JSON), a model name, ``list[T]`` or ``map[T]``.
"""

from __future__ import annotations

import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "simulator" / "kube" / "data" / "kube_models.json"
_SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "datetime": "date-time",
            "date": "date-time", "bytes": "byte", "bytearray": "byte"}


def _is_int_or_string(annotation: Any) -> bool:
    args = {a.__origin__ if hasattr(a, "__origin__") and a.__origin__ is not typing.Union else a
            for a in typing.get_args(annotation)}
    names = {getattr(typing.get_args(a)[0] if typing.get_args(a) else a, "__name__", str(a)) for a in args}
    return {"int", "str"} <= names


def _type(text: str, annotation: Any) -> str:
    text = text.strip()
    if text in _SCALARS:
        return _SCALARS[text]
    if text == "object":
        return "int-or-string" if _is_int_or_string(annotation) else "any"
    match = re.fullmatch(r"List\[(.+)\]", text)
    if match:
        return f"list[{_type(match.group(1), None)}]"
    match = re.fullmatch(r"Dict\[str,\s*(.+)\]", text)
    if match:
        return f"map[{_type(match.group(1), None)}]"
    return text


def describe() -> dict[str, Any]:
    import kubernetes
    from kubernetes.client import models

    out: dict[str, Any] = {}
    for name in sorted(dir(models)):
        model = getattr(models, name)
        types = getattr(model, "openapi_types", None)
        attributes = getattr(model, "attribute_map", None)
        if not isinstance(types, dict) or not isinstance(attributes, dict):
            continue
        fields = getattr(model, "model_fields", {})
        entry: dict[str, Any] = {}
        required: list[str] = []
        for attribute, text in sorted(types.items()):
            info = fields.get(attribute)
            json_name = attributes[attribute]
            entry[json_name] = _type(str(text), getattr(info, "annotation", None))
            if info is not None and info.is_required():
                required.append(json_name)
        out[name] = {"fields": entry, "required": sorted(required)} if required else {"fields": entry}
    return {"client": kubernetes.__version__, "models": out}


def render() -> str:
    return json.dumps(describe(), indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render())
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
