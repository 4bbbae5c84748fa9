"""Command line: `python -m engine <paper> <command>` (`python -m engine --help` lists them).

A paper's server hooks list its commands in ``COMMANDS`` ({name: (module in its server/ folder,
help)}); each command module has ``add_arguments(parser)`` and ``run(args) -> exit status``.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .config import default_config
from .papers import load_papers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine")
    by_paper = parser.add_subparsers(dest="paper", required=True, metavar="PAPER")
    modules = {}
    for paper in load_papers(default_config()["PAPERS_DIR"]).values():
        commands = getattr(paper.server, "COMMANDS", {})
        if not commands:
            continue
        paper_parser = by_paper.add_parser(paper.slug, help=f"commands of the {paper.meta['short_title']} paper")
        sub = paper_parser.add_subparsers(dest="command", required=True)
        for name, (module_name, help_text) in commands.items():
            module = importlib.import_module(f"{paper.package}.server.{module_name}")
            module.add_arguments(sub.add_parser(name, help=help_text, description=module.__doc__))
            modules[(paper.slug, name)] = module
    args = parser.parse_args(argv)
    return modules[(args.paper, args.command)].run(args)


if __name__ == "__main__":
    sys.exit(main())
