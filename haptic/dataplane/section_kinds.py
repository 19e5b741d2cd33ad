"""What HAProxy's section keywords are and how each section kind sorts its directives into children.

A directive is one of: a named child (servers, binds, peers... matched by name), an ACL (matched by
ACL name), an entry of an ordered rule list (matched by position), or a plain attribute of its
section (``balance``, ``timeout server``, ``option httplog``...).
"""

from __future__ import annotations

from typing import Final, Literal

Category = Literal["named", "acl", "rule"]

SECTION_KEYWORDS: Final = frozenset(
    {
        "global",
        "defaults",
        "frontend",
        "backend",
        "listen",
        "peers",
        "resolvers",
        "mailers",
        "userlist",
        "cache",
        "http-errors",
        "ring",
        "program",
        "log-forward",
        "fcgi-app",
        "crt-store",
        "log-profile",
        "traces",
        "acme",
    }
)

# Sections that never carry a name; every other kind except ``defaults`` needs one.
UNNAMED_SECTIONS: Final = frozenset({"global", "traces"})
# Flat sections: every difference is an update of the section itself.
PROXY_KINDS: Final = frozenset({"frontend", "backend", "listen"})

_PROXY_RULES: Final = (
    "http-request",
    "http-response",
    "http-after-response",
    "tcp-request",
    "tcp-response",
    "http-check",
    "tcp-check",
    "filter",
    "log",
    "capture",
    "use_backend",
    "use-server",
    "stick",
    "redirect",
    "quic-initial",
)

_PROXY_CHILDREN: dict[str, tuple[Category, str]] = {kw: ("rule", kw) for kw in _PROXY_RULES}
_PROXY_CHILDREN.update(
    {
        "acl": ("acl", "acl"),
        "server": ("named", "server"),
        "server-template": ("named", "server-template"),
        "bind": ("named", "bind"),
    }
)

CHILDREN_BY_KIND: Final[dict[str, dict[str, tuple[Category, str]]]] = {
    "frontend": _PROXY_CHILDREN,
    "backend": _PROXY_CHILDREN,
    "listen": _PROXY_CHILDREN,
    "peers": {"peer": ("named", "peer"), "server": ("named", "server")},
    "resolvers": {"nameserver": ("named", "nameserver")},
    "mailers": {"mailer": ("named", "mailer")},
    "userlist": {"user": ("named", "user"), "group": ("named", "group")},
    "ring": {"server": ("named", "server")},
    "log-forward": {"bind": ("named", "bind"), "dgram-bind": ("named", "dgram-bind"), "log": ("rule", "log")},
}

# Named children whose line must carry an address after the name (``server`` in ``peers`` may not:
# that is the local peer).
ADDRESS_REQUIRED: Final[dict[str, frozenset[str]]] = {
    "server": frozenset({"backend", "listen", "ring"}),
    "server-template": frozenset({"backend", "listen"}),
    "peer": frozenset({"peers"}),
    "nameserver": frozenset({"resolvers"}),
    "mailer": frozenset({"mailers"}),
}

# Binds are named by their ``name`` parameter, else by their address.
NAMED_BY_ADDRESS: Final = frozenset({"bind", "dgram-bind"})

# Priorities of the Dataplane API object kinds (HAPTIC's ordering): parents before children.
SECTION_PRIORITY: Final[dict[str, int]] = {
    "global": 10,
    "userlist": 10,
    "crt-store": 10,
    "log-forward": 10,
    "fcgi-app": 10,
    "program": 10,
    "peers": 15,
    "ring": 15,
    "mailers": 15,
    "cache": 15,
    "resolvers": 15,
    "log-profile": 15,
    "traces": 15,
    "acme": 15,
    "defaults": 20,
    "http-errors": 25,
    "frontend": 30,
    "backend": 30,
    "listen": 30,
}

CHILD_PRIORITY: Final[dict[str, int]] = {
    "user": 16,
    "group": 16,
    "bind": 40,
    "dgram-bind": 40,
    "server": 40,
    "server-template": 40,
    "peer": 40,
    "mailer": 40,
    "nameserver": 40,
    "acl": 50,
}
RULE_PRIORITY: Final = 60

# Directives HAProxy also accepts at column 0. Any other word starting a line at column 0 is taken
# for a misspelt section keyword, which is the usual mistake in hand- or template-written configs.
COLUMN_ZERO_DIRECTIVES: Final = frozenset(
    {
        *_PROXY_CHILDREN,
        "declare",
        "balance",
        "mode",
        "option",
        "no",
        "timeout",
        "maxconn",
        "default_backend",
        "default-server",
        "errorfile",
        "errorfiles",
        "http-error",
        "hash-type",
        "cookie",
        "retries",
        "retry-on",
        "stats",
        "stick-table",
        "log-format",
        "log-tag",
        "compression",
        "monitor-uri",
        "monitor",
        "description",
        "id",
        "disabled",
        "enabled",
        "unique-id-format",
        "unique-id-header",
        "user",
        "group",
        "peer",
        "nameserver",
        "mailer",
        "daemon",
        "master-worker",
        "nbthread",
        "chroot",
        "pidfile",
        "ssl-default-bind-options",
        "ssl-default-bind-ciphers",
        "ssl-default-server-options",
        "tune.ssl.default-dh-param",
        "command",
        "format",
        "size",
        "maxlen",
        "total-max-size",
        "max-age",
        "process-vary",
        "max-secondary-entries",
        "max-object-size",
        "log",
        "nbproc",
        "cpu-map",
        "uid",
        "gid",
        "ca-base",
        "crt-base",
        "hard-stop-after",
        "localpeer",
        "node",
        "setenv",
        "presetenv",
        "unsetenv",
        "resetenv",
        "spread-checks",
        "server-state-file",
        "server-state-base",
        "insecure-fork-wanted",
        "expose-experimental-directives",
        "accepted_payload_size",
        "resolve_retries",
        "hold",
        "parse-resolv-conf",
        "table",
        "shards",
        "docroot",
        "index",
        "path-info",
        "load",
    }
)

# Families of global/tuning keywords, also accepted at column 0.
COLUMN_ZERO_PREFIXES: Final = ("tune.", "ssl-", "lua-", "h1-", "h2-", "log-", "http-", "tcp-", "no-", "set-", "stats-")
