"""Subcommands of the ``haptic-sim`` CLI, one module each (same contract as ``haptic.commands``)."""
