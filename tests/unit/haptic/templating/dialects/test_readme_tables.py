"""The README's annotation tables are the dialect tables (one source of truth), and every entry is complete."""

from __future__ import annotations

import pytest

from haptic.templating.dialects import Dialect, markdown_table
from haptic.templating.dialects.registry import DIALECTS
from tests.support.paths import REPO

README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
def test_readme_holds_the_generated_table(dialect: Dialect) -> None:
    # Regenerate with `python -m haptic.templating.dialects NAME` and paste it under the library's README heading.
    assert markdown_table(dialect) in README


@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
def test_every_annotation_is_documented_and_parsed_when_rendered(dialect: Dialect) -> None:
    names = [a.name for a in dialect.annotations]
    assert len(names) == len(set(names))
    for entry in dialect.annotations:
        assert entry.values and entry.haproxy, entry.name
        if entry.support in ("differences", "ignored", "refused"):
            assert entry.differences, f"{entry.name}: a {entry.support} annotation must say how it differs"
        if entry.support in ("supported", "differences"):
            assert entry.parse is not None, f"{entry.name}: a rendered annotation needs a parser"


def test_the_issue_s_annotations_are_all_in_the_nginx_table() -> None:
    wanted = [
        "rewrite-target", "use-regex", "ssl-redirect", "force-ssl-redirect", "permanent-redirect",
        "permanent-redirect-code", "temporal-redirect", "app-root", "backend-protocol",
        "whitelist-source-range", "denylist-source-range", "enable-cors", "cors-allow-origin",
        "cors-allow-methods", "cors-allow-headers", "cors-expose-headers", "cors-max-age", "proxy-body-size",
        "proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "upstream-vhost",
        "x-forwarded-prefix", "server-alias", "affinity", "session-cookie-name", "session-cookie-path",
        "session-cookie-max-age", "canary", "canary-weight", "canary-by-header", "canary-by-header-value",
        "canary-by-cookie", "auth-type", "auth-secret", "auth-realm", "limit-rps", "limit-connections",
        "custom-http-errors", "default-backend", "service-upstream", "configuration-snippet", "server-snippet",
        "auth-snippet",
    ]
    known = {a.name for a in DIALECTS["nginx"].annotations}
    assert [name for name in wanted if name not in known] == []
