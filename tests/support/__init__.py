"""Test helpers shared by the suites (small in-memory fakes and clocks)."""
