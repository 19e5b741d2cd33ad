"""Answers, errors and request checks of the fake Dataplane API, as its v3 specification defines them.

The server model's field names are the specification's (v3.2 ``server_params`` plus ``server``):
several are spelt with ``-`` (``resolve-net``, ``agent-check``...). A body with another field is
refused, as the real API refuses properties its ``additionalProperties: false`` models lack.
Values that would reach haproxy's runtime socket must not hold a line break or another control
character (a newline would end the command and start another one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from haptic.core.control_characters import first_control_character

__all__ = [
    "PATH_VALUE",
    "SERVER_FIELDS",
    "Answer",
    "ApiError",
    "check_path_value",
    "check_server_model",
    "check_socket_values",
    "control_character",
]


class ApiError(Exception):
    """An answer other than success: status plus the API's error message."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"{status}: {message}")


@dataclass
class Answer:
    status: int
    body: Any = None
    reload_id: str | None = None
    text: str | None = None
    media_type: str = "text/plain"


# The specification's pattern for map names and entry ids in a path (runtime maps endpoints).
PATH_VALUE: Final = re.compile(r'^[^\r\n<>*;$#&{}"]+$')

SERVER_FIELDS: Final = frozenset({
    # server
    "name", "address", "port", "id", "metadata",
    # server_params (v3.2)
    "agent-addr", "agent-check", "agent-inter", "agent-port", "agent-send", "allow_0rtt", "alpn", "backup",
    "check", "check-pool-conn-name", "check-reuse-pool", "check-send-proxy", "check-sni", "check-ssl",
    "check_alpn", "check_proto", "check_via_socks4", "ciphers", "ciphersuites", "client_sigalgs", "cookie",
    "crl_file", "curves", "downinter", "error_limit", "fall", "fastinter", "force_sslv3", "force_tlsv10",
    "force_tlsv11", "force_tlsv12", "force_tlsv13", "guid", "hash_key", "health_check_address",
    "health_check_port", "idle_ping", "init-addr", "init-state", "inter", "log-bufsize", "log_proto",
    "maintenance", "max_reuse", "maxconn", "maxqueue", "minconn", "namespace", "no_sslv3", "no_tlsv10",
    "no_tlsv11", "no_tlsv12", "no_tlsv13", "no_verifyhost", "npn", "observe", "on-error", "on-marked-down",
    "on-marked-up", "pool_conn_name", "pool_low_conn", "pool_max_conn", "pool_purge_delay", "proto",
    "proxy-v2-options", "redir", "resolve-net", "resolve-prefer", "resolve_opts", "resolvers", "rise",
    "send-proxy", "send-proxy-v2", "send_proxy_v2_ssl", "send_proxy_v2_ssl_cn", "set-proxy-v2-tlv-fmt",
    "shard", "sigalgs", "slowstart", "sni", "socks4", "source", "ssl", "ssl_cafile", "ssl_certificate",
    "ssl_max_ver", "ssl_min_ver", "ssl_reuse", "sslv3", "stick", "strict-maxconn", "tcp_ut", "tfo",
    "tls_tickets", "tlsv10", "tlsv11", "tlsv12", "tlsv13", "track", "verify", "verifyhost", "weight", "ws",
})


# The first character of a value that ends a line or a command, as ``U+XXXX`` (None when there is none).
control_character = first_control_character


def check_path_value(name: str, value: str) -> None:
    """A map name or entry id from the URL: the specification's pattern, no control characters."""
    bad = control_character(value)
    if bad is not None:
        raise ApiError(400, f"path parameter {name} must not contain control character {bad}")
    if not PATH_VALUE.match(value):
        raise ApiError(400, f'path parameter {name} {value!r} does not match ^[^\\r\\n<>*;$#&{{}}"]+$')


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def check_socket_values(what: str, body: Any) -> None:
    """Refuses a body whose strings would break a runtime command (they never reach the socket)."""
    for text in _strings(body):
        bad = control_character(text)
        if bad is not None:
            raise ApiError(400, f"{what}: value {text!r} contains control character {bad}")


def check_server_model(model: dict[str, Any]) -> None:
    unknown = sorted(set(model) - SERVER_FIELDS)
    if unknown:
        raise ApiError(400, f"invalid server model: unknown field(s) {', '.join(unknown)}")
