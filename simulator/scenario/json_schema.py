"""The JSON Schema of the scenario format, rendered deterministically from the pydantic models."""

from __future__ import annotations

import json

from .schema import Scenario

SCHEMA_ID = "https://haproxy-haptic.org/schemas/scenario.schema.json"


def json_schema() -> dict[str, object]:
    schema = Scenario.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "HAPTIC scenario", **schema}


def render_json_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
