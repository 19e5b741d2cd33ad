"""Builds an argparse CLI from the subcommand modules found in a package."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable, Sequence
from types import ModuleType

Handler = Callable[[argparse.Namespace], int]


def add_subcommands(parser: argparse.ArgumentParser, package: ModuleType) -> None:
    """Registers every module of ``package`` that defines ``register(subparsers)``, in name order."""
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if callable(register):
            register(subparsers)


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0 if args.command is None else 2
    return func(args)
