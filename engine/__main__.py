"""Command line: `python -m engine <document> <command>` (`python -m engine --help` lists them).

A document's hooks list its commands (``DocumentHooks.commands``: {name: Command(module, help)});
each command module has ``add_arguments(parser)`` and ``run(args) -> exit status``.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .config import default_config
from .documents import load_documents


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine")
    by_document = parser.add_subparsers(dest="document", required=True, metavar="DOCUMENT")
    modules = {}
    for document in load_documents(default_config()["CONTENT_DIR"]).values():
        commands = document.hooks.commands
        if not commands:
            continue
        document_parser = by_document.add_parser(document.slug, help=f"commands of {document.meta['short_title']}")
        sub = document_parser.add_subparsers(dest="command", required=True)
        for name, command in commands.items():
            module = importlib.import_module(command.module)
            module.add_arguments(sub.add_parser(name, help=command.help, description=module.__doc__))
            modules[(document.slug, name)] = module
    args = parser.parse_args(argv)
    return modules[(args.document, args.command)].run(args)


if __name__ == "__main__":
    sys.exit(main())
