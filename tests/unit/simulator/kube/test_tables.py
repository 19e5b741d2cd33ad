"""kubectl's Table answers: CRD printer columns as the API server serves them."""

from __future__ import annotations

from datetime import UTC, datetime

from simulator.kube.resources import ResourceType
from simulator.kube.tables import to_table

NOW = datetime(2026, 1, 1, 0, 10, 0, tzinfo=UTC)
OBJ = {
    "metadata": {"name": "cfg", "creationTimestamp": "2026-01-01T00:05:00Z"},
    "status": {"validationStatus": "Valid"},
}


def test_declared_columns_replace_the_default_age_and_dates_are_ages() -> None:
    rt = ResourceType("example.org", "v1", "Thing", "things", True, custom=True, printer_columns=(
        {"name": "Status", "type": "string", "jsonPath": ".status.validationStatus"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ))
    table = to_table(rt, [OBJ], "7", None, NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert table["rows"][0]["cells"] == ["cfg", "Valid", "5m"]


def test_without_declared_columns_name_and_age() -> None:
    rt = ResourceType("example.org", "v1", "Thing", "things", True, custom=True)
    table = to_table(rt, [OBJ], "7", None, NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["cfg", "5m"]
