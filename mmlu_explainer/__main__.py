"""Command line: `python -m mmlu_explainer <command>`.

Each command is a module with ``add_arguments(parser)`` and ``run(args) -> exit status``.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "download": ("download", "fetch the official MMLU release into MMLU_DATA_DIR"),
    "evaluate": ("evaluate", "score real MMLU questions with the live-scoring model; write JSONL"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mmlu_explainer")
    commands = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(f"mmlu_explainer.{module_name}")
        module.add_arguments(commands.add_parser(name, help=help_text, description=module.__doc__))
        modules[name] = module
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
