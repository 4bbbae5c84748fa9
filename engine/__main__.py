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
    by_paper = parser.add_subparsers(dest="paper", required=True, metavar="DOCUMENT")
    modules = {}
    for paper in load_documents(default_config()["CONTENT_DIR"]).values():
        commands = paper.hooks.commands
        if not commands:
            continue
        paper_parser = by_paper.add_parser(paper.slug, help=f"commands of {paper.meta['short_title']}")
        sub = paper_parser.add_subparsers(dest="command", required=True)
        for name, command in commands.items():
            module = importlib.import_module(command.module)
            module.add_arguments(sub.add_parser(name, help=command.help, description=module.__doc__))
            modules[(paper.slug, name)] = module
    args = parser.parse_args(argv)
    return modules[(args.paper, args.command)].run(args)


if __name__ == "__main__":
    sys.exit(main())
