"""Scenario format, runner and pytest plugin."""
