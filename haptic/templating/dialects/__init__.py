"""Annotation dialects of other ingress controllers (``nginx.ingress.kubernetes.io/*``, ``haproxy.org/*``).

Each dialect module holds one table (``Dialect.annotations``): per annotation its accepted values, what it
becomes in HAProxy, its support level and its differences from the original controller. The table is the
single source of truth of three consumers: the template libraries ``nginx`` and ``haproxytech`` (through
``read_annotations``, which parses an Ingress's annotations into *settings*, a dialect-independent dict the
shared templates render), ``haptic migrate-report`` and the README's annotation tables
(``markdown_table``).

Settings keys (all optional): ``balance``, ``timeout_connect``/``timeout_server``/``timeout_queue``/
``timeout_tunnel``/``timeout_check`` (HAProxy durations), ``allow``/``deny`` (CIDR lists), ``ssl_redirect``
(bool), ``force_ssl_redirect``, ``ssl_redirect_code``, ``redirect`` ({location, code}), ``app_root``,
``server_options`` (text appended to ``server`` lines), ``check`` ({uri}), ``regex`` (paths are regexes),
``rewrite_target`` (the replacement of each regex path), ``upstream_vhost``,
``request_headers``/``response_headers`` ([(name, value)]), ``cors`` ({origins, methods, headers,
credentials, expose, max_age}), ``body_limit`` (bytes), ``affinity`` ({name, path, max_age}), ``canary``
({header, header_value, header_pattern, cookie, weight, total}), ``auth`` ({secret, realm, secret_type}), ``rate``
({limit, period, expire, status, exempt}), ``conn_limit`` ({limit, status}), ``aliases`` (hosts),
``path_rewrite`` ((regex, replacement)), ``redirect_prefix`` ({host, code}), ``default_backend`` (a Service
name; ``fallback``: its backend), ``deny_all`` (every request denied with 503), ``forwarded_prefix``,
``ssl_passthrough`` (routed by TLS server name only: no HTTP routes), ``error_statuses`` (upstream statuses
answered with HAProxy's own error page);
``body_limit`` None means explicitly unlimited. ``with_dialect`` adds ``routes`` (the Ingress's paths).

Pure data and parsing: imports only the control-character set, the templating safety checks and the value
parsers (never the render context: ``haptic.templating.dialect_helpers`` binds the tables to templates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from haptic.core.control_characters import CONTROL
from haptic.templating.dialects.values import Parser

Support = Literal["supported", "differences", "ignored", "refused"]
SUPPORT_LEVELS: tuple[Support, ...] = ("supported", "differences", "ignored", "refused")
SUPPORT_TEXT = {"supported": "supported", "differences": "supported with differences", "ignored": "ignored",
                "refused": "refused"}


@dataclass(frozen=True)
class Annotation:
    """One annotation of a dialect (``name`` without the dialect's prefix)."""

    name: str
    values: str
    haproxy: str
    support: Support = "supported"
    differences: str = ""
    parse: Parser | None = None
    #: where the parsed value goes in the settings ("a.b": settings["a"]["b"]); default: the name, '-' → '_'
    key: str = ""
    #: ignoring the annotation (or refusing its value) changes which backend answers, or whether one does
    routing: bool = False
    #: the documented difference itself changes which backend answers (e.g. use-regex's scope)
    routing_difference: bool = False
    #: the value legitimately spans lines (header lists, snippets): control characters do not exclude the Ingress
    multiline: bool = False

    @property
    def setting(self) -> str:
        return self.key or self.name.replace("-", "_")


@dataclass(frozen=True)
class Finding:
    """What became of one annotation of one Ingress."""

    annotation: str
    support: Support
    message: str
    routing: bool
    #: the value was refused as invalid (a warning in the render, "refused" in the report)
    invalid: bool = False
    known: bool = True


@dataclass
class Reading:
    settings: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


Finisher = Callable[[dict[str, Any], Mapping[str, str]], None]


@dataclass(frozen=True)
class Dialect:
    name: str
    prefix: str
    title: str
    #: the IngressClass the library serves by default
    ingress_class: str
    annotations: tuple[Annotation, ...]
    #: derives settings from the parsed ones (defaults that depend on other annotations, implications)
    finish: Finisher
    #: whether an Ingress's paths are regular expressions (they are then checked as such)
    regex_paths: Callable[[Mapping[str, str]], bool] = lambda annotations: False
    _index: dict[str, Annotation] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({a.name: a for a in self.annotations})

    def lookup(self, key: str) -> Annotation | None:
        return self._index.get(key.removeprefix(self.prefix)) if key.startswith(self.prefix) else None


def _store(settings: dict[str, Any], key: str, value: Any) -> None:
    head, _, rest = key.partition(".")
    if rest:
        settings.setdefault(head, {})[rest] = value
    else:
        settings[head] = value


def annotations_of(ingress: Any) -> Mapping[str, Any]:
    meta = ingress.get("metadata") if isinstance(ingress, Mapping) else None
    found = meta.get("annotations") if isinstance(meta, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def read_annotations(ingress: Any, dialect: Dialect) -> Reading:
    """The settings of ``ingress``'s ``dialect`` annotations, and a finding for each of them."""
    reading = Reading()
    raw = annotations_of(ingress)
    mine = {key: value for key, value in raw.items() if isinstance(key, str) and key.startswith(dialect.prefix)}
    for key in sorted(mine):
        value = mine[key]
        entry = dialect.lookup(key)
        if entry is None:
            reading.findings.append(Finding(key, "ignored", f"{key} is not an annotation this library knows",
                                            False, known=False))
            continue
        if entry.support in ("ignored", "refused"):
            verb = "never rendered" if entry.support == "refused" else "ignored"
            reading.findings.append(Finding(key, entry.support, f"{key}: {verb} ({entry.differences})",
                                            entry.routing))
            continue
        try:
            if not isinstance(value, str):
                raise ValueError("expected a string")
            parsed = entry.parse(value.strip()) if entry.parse is not None else value
        except ValueError as exc:
            reading.findings.append(Finding(key, "refused", f"{key}: invalid value ({exc}); the annotation is "
                                            "ignored", entry.routing, invalid=True))
            continue
        _store(reading.settings, entry.setting, parsed)
        routing = entry.routing_difference and entry.support == "differences"
        reading.findings.append(Finding(key, entry.support, entry.differences, routing))
    dialect.finish(reading.settings, {k: v for k, v in mine.items() if isinstance(v, str)})
    return reading


def hostile_annotations(ingress: Any, dialect: Dialect) -> list[str]:
    """The reasons to exclude ``ingress`` as unsafe: control characters in a one-line annotation of the dialect
    (a newline is how a value would smuggle an HAProxy directive in; such an Ingress is refused whole, as the
    Ingress library refuses one with a hostile ``haproxy-haptic.org/*`` annotation)."""
    reasons = []
    for key, value in sorted(annotations_of(ingress).items()):
        if not isinstance(key, str) or not key.startswith(dialect.prefix) or not isinstance(value, str):
            continue
        entry = dialect.lookup(key)
        if entry is not None and (entry.multiline or entry.support == "refused"):
            continue
        if CONTROL.search(value.strip()):
            reasons.append(f"annotation {key} contains control characters")
    return reasons


def markdown_table(dialect: Dialect) -> str:
    """The README table of ``dialect`` (a test keeps the README equal to it)."""
    lines = ["| Annotation | Values | In HAProxy | Support | Differences |", "|---|---|---|---|---|"]
    for entry in dialect.annotations:
        cells = [f"`{dialect.prefix}{entry.name}`", entry.values, entry.haproxy, SUPPORT_TEXT[entry.support],
                 entry.differences or "—"]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"
