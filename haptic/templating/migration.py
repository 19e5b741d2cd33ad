"""The migration report: what the dialect libraries make of a set of Ingresses (``haptic migrate-report``).

For each Ingress and each annotation of a known dialect (``nginx.ingress.kubernetes.io/*``,
``haproxy.org/*``): supported, supported with differences, ignored or refused (snippets, invalid values), read
from the same tables the libraries render from (``haptic.templating.dialects``). An Ingress *routes
differently* when an annotation that decides where (or whether) a request is answered is not fully
supported, or when the library would exclude the Ingress as unsafe. Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from haptic.templating.dialect_helpers import dialect_reasons
from haptic.templating.dialects import SUPPORT_LEVELS, SUPPORT_TEXT, Dialect, annotations_of, read_annotations
from haptic.templating.dialects.registry import DIALECTS


def _class_of(ingress: Mapping[str, Any]) -> str:
    spec = ingress.get("spec") or {}
    found = spec.get("ingressClassName") or annotations_of(ingress).get("kubernetes.io/ingress.class")
    return str(found or "")


def _dialects_of(ingress: Mapping[str, Any], only: str | None) -> list[Dialect]:
    keys = [k for k in annotations_of(ingress) if isinstance(k, str)]
    return [d for d in DIALECTS.values()
            if (only is None or d.name == only) and any(k.startswith(d.prefix) for k in keys)]


def ingress_report(ingress: Mapping[str, Any], only: str | None = None) -> dict[str, Any]:
    meta = ingress.get("metadata") or {}
    annotations: list[dict[str, Any]] = []
    excluded: list[str] = []
    for found in _dialects_of(ingress, only):
        excluded += dialect_reasons(found.name)(ingress)
        for finding in read_annotations(ingress, found).findings:
            annotations.append({
                "annotation": finding.annotation, "library": found.name, "support": finding.support,
                "known": finding.known, "invalid": finding.invalid, "routing": finding.routing,
                "note": finding.message,
            })
    counts = Counter(a["support"] for a in annotations)
    why = [a["annotation"] for a in annotations if a["routing"] and a["support"] != "supported"]
    return {
        "namespace": str(meta.get("namespace") or ""), "name": str(meta.get("name") or ""),
        "ingressClass": _class_of(ingress),
        "counts": {level: counts.get(level, 0) for level in SUPPORT_LEVELS},
        "routesDifferently": bool(why or excluded), "because": why, "excluded": excluded,
        "annotations": annotations,
    }


def migration_report(ingresses: Iterable[Mapping[str, Any]], only: str | None = None) -> dict[str, Any]:
    """Per Ingress (sorted by namespace/name) and in total."""
    per = sorted((ingress_report(i, only) for i in ingresses), key=lambda r: (r["namespace"], r["name"]))
    levels: Counter[str] = Counter()
    by_annotation: dict[str, dict[str, Any]] = {}
    for item in per:
        for entry in item["annotations"]:
            levels[entry["support"]] += 1
            slot = by_annotation.setdefault(entry["annotation"], {"annotation": entry["annotation"],
                                                                  "support": Counter(), "ingresses": 0})
            slot["support"][entry["support"]] += 1
            slot["ingresses"] += 1
    annotations = [
        {"annotation": name, "ingresses": slot["ingresses"],
         "support": {level: n for level, n in sorted(slot["support"].items())}}
        for name, slot in sorted(by_annotation.items(), key=lambda kv: (-kv[1]["ingresses"], kv[0]))
    ]
    return {
        "ingresses": per,
        "total": {
            "ingresses": len(per),
            "withDialectAnnotations": sum(1 for item in per if item["annotations"]),
            "routingDifferently": sum(1 for item in per if item["routesDifferently"]),
            "excluded": sum(1 for item in per if item["excluded"]),
            "annotations": {level: levels.get(level, 0) for level in SUPPORT_LEVELS},
        },
        "annotations": annotations,
    }


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def report_table(report: Mapping[str, Any]) -> str:
    """The ``-o table`` form: one line per Ingress, the details of what is not fully supported, the totals."""
    rows = [["INGRESS", "CLASS", "SUPPORTED", "DIFFERENCES", "IGNORED", "REFUSED", "ROUTES DIFFERENTLY"]]
    details: list[str] = []
    for item in report["ingresses"]:
        c = item["counts"]
        because = ", ".join(name.rsplit("/", 1)[-1] for name in item["because"])
        differently = "excluded" if item["excluded"] else (f"yes ({because})" if item["routesDifferently"] else "no")
        rows.append([f"{item['namespace']}/{item['name']}", item["ingressClass"] or "-", str(c["supported"]),
                     str(c["differences"]), str(c["ignored"]), str(c["refused"]), differently])
        for reason in item["excluded"]:
            details.append(f"  {item['namespace']}/{item['name']}: not routed at all: {reason}")
        for entry in item["annotations"]:
            if entry["support"] != "supported" and entry["note"]:
                label = SUPPORT_TEXT[entry["support"]] if entry["known"] else "unknown"
                note = entry["note"]
                if not note.startswith(entry["annotation"]):
                    note = f"{entry['annotation']}: {note}"
                details.append(f"  {item['namespace']}/{item['name']}: {label}: {note}")
    total = report["total"]
    levels = total["annotations"]
    lines = _table(rows)
    if details:
        lines += ["", "Not fully supported:", *details]
    lines += ["", f"Total: {total['ingresses']} Ingresses, {total['withDialectAnnotations']} with nginx/haproxy.org "
              f"annotations, {total['routingDifferently']} would route differently ({total['excluded']} not at all); "
              f"annotations: {levels['supported']} supported, {levels['differences']} with differences, "
              f"{levels['ignored']} ignored, {levels['refused']} refused"]
    return "\n".join(lines) + "\n"
