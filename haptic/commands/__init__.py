"""Subcommands of the ``haptic`` CLI, one module each.

A module here defines ``register(subparsers)`` that adds its parser and sets ``func`` (a callable
taking the parsed ``argparse.Namespace`` and returning an exit code). The CLI discovers the modules
by name, so adding a command never edits a shared file.
"""
