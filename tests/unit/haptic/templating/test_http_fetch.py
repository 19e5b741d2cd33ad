"""``http.fetch`` in templates: argument checks, pending URLs, critical failures, fixtures."""

from __future__ import annotations

import pytest

from haptic.templating.engine import RenderInputs
from haptic.templating.errors import TemplateRenderError
from haptic.templating.http_fetch import FetchRequest, FixtureHttpSource, HttpFetchPending, Lookup
from tests.unit.haptic.templating.helpers import engine_for

URL = "http://lists.example/blocked.txt"


class Answers:
    """An HttpSource that answers from a dict; URLs absent from it are pending."""

    def __init__(self, **by_url: Lookup) -> None:
        self.by_url = by_url
        self.asked: list[FetchRequest] = []

    def lookup(self, request: FetchRequest) -> Lookup:
        self.asked.append(request)
        return self.by_url.get(request.url, Lookup(pending=True))


def render(source: str, http: object) -> str:
    return engine_for(source).render(RenderInputs(http=http)).config  # type: ignore[arg-type]


def test_fetched_content_is_rendered_with_both_spellings() -> None:
    http = Answers(**{URL: Lookup(content="10.0.0.0/8")})
    out = render(f"{{{{ http.fetch('{URL}') }}}} {{{{ http.Fetch('{URL}', {{'delay': '60s'}}) }}}}", http)
    assert out == "10.0.0.0/8 10.0.0.0/8"
    assert http.asked[1].options.delay == 60.0


def test_every_missing_url_of_a_render_is_reported_at_once() -> None:
    source = "{{ http.fetch('http://a.example/x') }}{{ http.fetch('http://b.example/y') | int }}"
    with pytest.raises(HttpFetchPending) as caught:
        render(source, Answers())
    assert [r.url for r in caught.value.requests] == ["http://a.example/x", "http://b.example/y"]


def test_a_render_that_fails_on_missing_content_asks_for_it_instead() -> None:
    source = "{% set n = http.fetch('http://a.example/n') %}{{ fail('empty') if not n else n }}"
    with pytest.raises(HttpFetchPending):
        render(source, Answers())


def test_a_failed_url_renders_empty_unless_critical() -> None:
    http = Answers(**{URL: Lookup(error="GET: HTTP 503")})
    assert render(f"[{{{{ http.fetch('{URL}') }}}}]", http) == "[]"
    with pytest.raises(TemplateRenderError, match="failed: GET: HTTP 503"):
        render(f"{{{{ http.fetch('{URL}', {{'critical': true}}) }}}}", http)


@pytest.mark.parametrize(("args", "message"), [
    ("'ftp://x/y'", "is not an http"),
    ("'http://u:pw@x.example/'", "give credentials in 'auth'"),
    (f"'{URL}', {{'delay': 'soon'}}", "'delay' must be a duration"),
    (f"'{URL}', {{'delay': '100ms'}}", "'delay' must be 0 or at least 1s"),
    (f"'{URL}', {{'retries': 99}}", "'retries' must be an integer from 0 to 10"),
    (f"'{URL}', {{'maxSize': 0}}", "'maxSize' must be an integer"),
    (f"'{URL}', {{'every': '1s'}}", "unknown option"),
    (f"'{URL}', none, {{'type': 'digest'}}", "must be basic, bearer or header"),
    (f"'{URL}', none, {{'type': 'bearer'}}", "needs a non-empty string 'token'"),
])
def test_bad_arguments_fail_the_render_clearly(args: str, message: str) -> None:
    with pytest.raises(TemplateRenderError, match=message):
        render(f"{{{{ http.fetch({args}) }}}}", Answers())


def test_credentials_in_a_url_never_reach_the_message() -> None:
    with pytest.raises(TemplateRenderError) as caught:
        render("{{ http.fetch('http://u:hunter22@x.example/') }}", Answers())
    assert "hunter22" not in str(caught.value)


def test_without_a_source_http_fetch_says_it_is_unavailable() -> None:
    with pytest.raises(TemplateRenderError, match="not available in this render"):
        render(f"{{{{ http.fetch('{URL}') }}}}", None)


def test_fixtures_answer_mocked_urls_and_fail_on_others() -> None:
    fixtures = FixtureHttpSource({URL: "mocked"})
    assert render(f"{{{{ http.fetch('{URL}') }}}}", fixtures) == "mocked"
    with pytest.raises(TemplateRenderError, match="no httpResources fixture"):
        render("{{ http.fetch('http://other.example/') }}", fixtures)
