"""Converting between a ``server`` line and the Dataplane API v3 server JSON model.

``server_to_model`` and ``model_to_server_line`` are inverse on models: rendering a model and
parsing it back gives the same model. Words the table below does not know are kept verbatim, in
order, under ``extra_params`` so that nothing is lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, Literal

from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.tokenizer import tokenize_line, unquote

__all__ = [
    "EXTRA_PARAMS",
    "NON_API_FIELDS",
    "RUNTIME_ADD_FIELDS",
    "RUNTIME_SERVER_FIELDS",
    "SERVER_KEYWORDS",
    "is_server_keyword",
    "model_to_server_line",
    "runtime_only_change",
    "server_to_model",
    "server_words_to_model",
    "split_address",
]

# Fields the Dataplane API applies through the HAProxy runtime API, without a reload.
# (The API's JSON names: some are spelt with '-', as in its v3 specification.)
RUNTIME_SERVER_FIELDS: Final = frozenset(
    {"weight", "address", "port", "maintenance", "agent-check", "agent-addr", "agent-send", "health_check_port"}
)

#: Server model fields that a Dataplane API ``add server`` (``POST /runtime/backends/{b}/servers``, the
#: RuntimeAddServer model) reproduces exactly: a new server with only these is added to the running haproxy
#: as its config line would load it. Not ``cookie`` (dynamic servers refuse it), nor ``check``/``agent-check``:
#: haproxy starts a dynamic server's checks only on ``enable health``, which the API has no call for, so the
#: server would take traffic unchecked until the next reload (verified on haproxy 2.6: "no check").
RUNTIME_ADD_FIELDS: Final = frozenset(
    {"name", "address", "port", "maintenance", "weight", "inter", "fastinter", "downinter", "rise", "fall",
     "health_check_port", "maxconn", "minconn", "maxqueue", "slowstart", "backup"}
)

EXTRA_PARAMS: Final = "extra_params"

_Kind = Literal["flag", "negflag", "bool", "str", "list", "int", "time", "maintenance"]

# (keyword, model key, kind) in rendering order. ``negflag`` flags also accept ``no-<keyword>``,
# which sets the field to "disabled".
_PARAMS: Final[tuple[tuple[str, str, _Kind], ...]] = (
    ("disabled", "maintenance", "maintenance"),
    ("backup", "backup", "negflag"),
    ("check", "check", "negflag"),
    ("inter", "inter", "time"),
    ("fastinter", "fastinter", "time"),
    ("downinter", "downinter", "time"),
    ("rise", "rise", "int"),
    ("fall", "fall", "int"),
    ("port", "health_check_port", "int"),
    ("addr", "health_check_address", "str"),
    ("weight", "weight", "int"),
    ("maxconn", "maxconn", "int"),
    ("minconn", "minconn", "int"),
    ("maxqueue", "maxqueue", "int"),
    ("slowstart", "slowstart", "time"),
    ("id", "id", "int"),
    ("cookie", "cookie", "str"),
    ("agent-check", "agent-check", "negflag"),
    ("agent-addr", "agent-addr", "str"),
    ("agent-port", "agent-port", "int"),
    ("agent-send", "agent-send", "str"),
    ("agent-inter", "agent-inter", "time"),
    ("observe", "observe", "str"),
    ("error-limit", "error_limit", "int"),
    ("on-error", "on-error", "str"),
    ("on-marked-down", "on-marked-down", "str"),
    ("on-marked-up", "on-marked-up", "str"),
    ("track", "track", "str"),
    ("redir", "redir", "str"),
    ("init-addr", "init-addr", "str"),
    ("resolvers", "resolvers", "str"),
    ("resolve-prefer", "resolve-prefer", "str"),
    ("resolve-net", "resolve-net", "str"),
    ("resolve-opts", "resolve_opts", "str"),
    ("proto", "proto", "str"),
    ("alpn", "alpn", "str"),
    ("ws", "ws", "str"),
    ("ssl", "ssl", "negflag"),
    ("verify", "verify", "str"),
    ("verifyhost", "verifyhost", "str"),
    ("sni", "sni", "str"),
    ("ca-file", "ssl_cafile", "str"),
    ("crt", "ssl_certificate", "str"),
    ("crl-file", "crl_file", "str"),
    ("ciphers", "ciphers", "str"),
    ("ciphersuites", "ciphersuites", "str"),
    ("curves", "curves", "str"),
    ("sigalgs", "sigalgs", "str"),
    ("ssl-min-ver", "ssl_min_ver", "str"),
    ("ssl-max-ver", "ssl_max_ver", "str"),
    ("ssl-reuse", "ssl_reuse", "negflag"),
    ("tls-tickets", "tls_tickets", "negflag"),
    ("allow-0rtt", "allow_0rtt", "bool"),
    ("force-sslv3", "force_sslv3", "flag"),
    ("force-tlsv10", "force_tlsv10", "flag"),
    ("force-tlsv11", "force_tlsv11", "flag"),
    ("force-tlsv12", "force_tlsv12", "flag"),
    ("force-tlsv13", "force_tlsv13", "flag"),
    ("no-sslv3", "no_sslv3", "flag"),
    ("no-tlsv10", "no_tlsv10", "flag"),
    ("no-tlsv11", "no_tlsv11", "flag"),
    ("no-tlsv12", "no_tlsv12", "flag"),
    ("no-tlsv13", "no_tlsv13", "flag"),
    ("check-ssl", "check-ssl", "negflag"),
    ("check-sni", "check-sni", "str"),
    ("check-alpn", "check_alpn", "str"),
    ("check-proto", "check_proto", "str"),
    ("check-send-proxy", "check-send-proxy", "negflag"),
    ("check-via-socks4", "check_via_socks4", "negflag"),
    ("send-proxy", "send-proxy", "negflag"),
    ("send-proxy-v2", "send-proxy-v2", "negflag"),
    ("send-proxy-v2-ssl", "send_proxy_v2_ssl", "negflag"),
    ("send-proxy-v2-ssl-cn", "send_proxy_v2_ssl_cn", "negflag"),
    ("proxy-v2-options", "proxy-v2-options", "list"),
    ("socks4", "socks4", "str"),
    ("source", "source", "str"),
    ("usesrc", "usesrc", "str"),
    ("namespace", "namespace", "str"),
    ("tfo", "tfo", "negflag"),
    ("tcp-ut", "tcp_ut", "time"),
    ("pool-max-conn", "pool_max_conn", "int"),
    ("pool-low-conn", "pool_low_conn", "int"),
    ("pool-purge-delay", "pool_purge_delay", "time"),
    ("max-reuse", "max_reuse", "int"),
    ("log-proto", "log_proto", "str"),
    ("shard", "shard", "int"),
    ("init-state", "init-state", "str"),
    ("hash-key", "hash_key", "str"),
    ("guid", "guid", "str"),
    ("non-stick", "non_stick", "negflag"),
    ("stick", "stick", "flag"),
    ("no-verifyhost", "no_verifyhost", "flag"),
    ("idle-ping", "idle_ping", "time"),
    ("log-bufsize", "log-bufsize", "int"),
    ("strict-maxconn", "strict-maxconn", "bool"),
    ("pool-conn-name", "pool_conn_name", "str"),
    ("check-pool-conn-name", "check-pool-conn-name", "str"),
    ("check-reuse-pool", "check-reuse-pool", "negflag"),
    ("npn", "npn", "str"),
    ("client-sigalgs", "client_sigalgs", "str"),
)

# Keys of this module's models that the Dataplane API's server model does not have: a server
# using them cannot be sent to the API as a model (its PUT would be refused or lose words).
NON_API_FIELDS: Final = frozenset({EXTRA_PARAMS, "usesrc", "non_stick"})

_BY_KEYWORD: Final[dict[str, tuple[str, _Kind]]] = {kw: (key, kind) for kw, key, kind in _PARAMS}
_BY_KEYWORD["enabled"] = ("maintenance", "maintenance")
_NEGATED: Final[dict[str, str]] = {f"no-{kw}": key for kw, key, kind in _PARAMS if kind == "negflag"}
_RENDER_ORDER: Final[tuple[tuple[str, str, _Kind], ...]] = _PARAMS

_UNIX_PREFIXES: Final = ("/", "unix@", "abns@", "abnsz@", "fd@", "sockpair@", "uxst@", "uxdg@")
_TIME = re.compile(r"^(\d+)(ms|s|m|h|d)?$")
_TIME_FACTOR: Final = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_NEEDS_QUOTES = re.compile(r"[\s#\"'\\]")


# Words that are server parameters, so cannot be a server's address.
SERVER_KEYWORDS: Final = frozenset(_BY_KEYWORD) | frozenset(_NEGATED)


def is_server_keyword(word: str) -> bool:
    """True for words that are server parameters (so cannot be the server's address)."""
    return word in SERVER_KEYWORDS


def server_to_model(line: str) -> dict[str, Any]:
    """The Dataplane API v3 server model of a ``server NAME ADDRESS[:PORT] params...`` line."""
    return server_words_to_model(tokenize_line(line, 0))


def server_words_to_model(words: Sequence[str]) -> dict[str, Any]:
    """Like ``server_to_model`` for a line already split into words."""
    if not words or words[0] != "server":
        raise ConfigParseError(0, f"not a server line: {' '.join(words)!r}")
    if len(words) < 3 or is_server_keyword(words[2]):
        name = words[1] if len(words) > 1 else ""
        raise ConfigParseError(0, f"server '{name}' has no address")
    model: dict[str, Any] = {"name": unquote(words[1])}
    address, port = split_address(unquote(words[2]))
    model["address"] = address
    if port is not None:
        model["port"] = port
    extras: list[str] = []
    i = 3
    n = len(words)
    while i < n:
        word = words[i]
        negated = _NEGATED.get(word)
        if negated is not None:
            model[negated] = "disabled"
            i += 1
            continue
        spec = _BY_KEYWORD.get(word)
        if spec is None:
            extras.append(word)
            i += 1
            continue
        key, kind = spec
        if kind == "maintenance":
            model[key] = "enabled" if word == "disabled" else "disabled"
            i += 1
        elif kind in ("flag", "negflag"):
            model[key] = "enabled"
            i += 1
        elif kind == "bool":
            model[key] = True
            i += 1
        elif i + 1 >= n:
            # A value keyword with no value: keep it verbatim rather than guess.
            extras.append(word)
            i += 1
        else:
            model[key] = _convert(kind, unquote(words[i + 1]))
            i += 2
    if extras:
        model[EXTRA_PARAMS] = extras
    return model


def model_to_server_line(model: dict[str, Any]) -> str:
    """Render a v3 server model back to ``server NAME ADDRESS[:PORT] params...``."""
    try:
        name = model["name"]
        address = model["address"]
    except KeyError as missing:
        raise ValueError(f"server model lacks {missing.args[0]!r}") from None
    endpoint = _render_endpoint(str(address), model.get("port"))
    words = ["server", _quote(str(name)), endpoint]
    for keyword, key, kind in _RENDER_ORDER:
        value = model.get(key)
        if value is None:
            continue
        if kind == "maintenance":
            words.append("disabled" if value == "enabled" else "enabled")
        elif kind in ("flag", "negflag"):
            if value == "enabled":
                words.append(keyword)
            elif value == "disabled" and kind == "negflag":
                words.append(f"no-{keyword}")
        elif kind == "bool":
            if value is True:
                words.append(keyword)
        elif kind == "list":
            words.extend((keyword, _quote(",".join(str(v) for v in value))))
        else:
            words.extend((keyword, _quote(str(value))))
    words.extend(str(w) for w in model.get(EXTRA_PARAMS, ()))
    return " ".join(words)


def split_address(endpoint: str) -> tuple[str, int | None]:
    """Split ``host:port`` the way HAProxy does (last colon; brackets allowed around IPv6)."""
    if endpoint.startswith(_UNIX_PREFIXES):
        return endpoint, None
    if endpoint.startswith("["):
        close = endpoint.find("]")
        if close > 0:
            host, rest = endpoint[1:close], endpoint[close + 1 :]
            if rest.startswith(":") and rest[1:].isdigit():
                return host, int(rest[1:])
            if not rest:
                return host, None
        return endpoint, None
    host, sep, port = endpoint.rpartition(":")
    if sep and port.isdigit() and host:
        return host, int(port)
    return endpoint, None


def _render_endpoint(address: str, port: Any) -> str:
    if ":" in address and "@" not in address and not address.startswith("/"):
        # A bare IPv6 address: brackets keep its last group from being read as the port.
        address = f"[{address}]"
    address = _quote(address)
    return address if port is None else f"{address}:{int(port)}"


def runtime_only_change(current: dict[str, Any], desired: dict[str, Any]) -> bool:
    """True when every field that differs between two server models is runtime-applicable."""
    for key in current.keys() | desired.keys():
        if current.get(key) != desired.get(key) and key not in RUNTIME_SERVER_FIELDS:
            return False
    return True


def _convert(kind: _Kind, value: str) -> Any:
    if kind == "list":
        return [v for v in value.split(",") if v]
    if kind == "int":
        return int(value) if value.isdigit() else value
    if kind == "time":
        match = _TIME.match(value)
        if match is None:
            return value
        return int(match.group(1)) * _TIME_FACTOR[match.group(2)]
    return value


def _quote(value: str) -> str:
    if value and not _NEEDS_QUOTES.search(value):
        return value
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f'"{escaped}"'
