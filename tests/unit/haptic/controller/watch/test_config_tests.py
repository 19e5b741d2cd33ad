"""What a status says about failed validationTests: which test and assertion, never what it saw."""

from __future__ import annotations

from haptic.controller.watch.config_tests import failure_lines
from haptic.validation import testrunner
from haptic.validation.assertions import AssertionResult


def test_failure_lines_never_show_rendered_content() -> None:
    secret = "-----BEGIN PRIVATE KEY-----"
    report = testrunner.TestReport((
        testrunner.TestResult("certs", "", False, (AssertionResult("equals", "", "cert:site.pem", False,
                                                        f"cert:site.pem is {secret!r}, expected 'x'"),)),
        testrunner.TestResult("cfg", "", False, (AssertionResult("contains", "has the marker", "haproxy.cfg", False,
                                                      f"pattern 'm' not found in haproxy.cfg: {secret}"),
                                      AssertionResult("deterministic", "", "haproxy.cfg", False, secret))),
        testrunner.TestResult("ok", "", True),
    ))
    assert failure_lines(report) == ["validationTest certs: equals on cert:site.pem",
                                     "validationTest cfg: has the marker: pattern 'm' not found (+1 more)"]
