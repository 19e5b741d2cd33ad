"""Fixtures of the Dataplane tests: the fake instance and its in-process client (tests/support/dataplane.py)."""

from tests.support.dataplane import client, fake

__all__ = ["client", "fake"]
