"""Command line, addressed by benchmark: ``python -m benchmarks <benchmark> <command>`` (``mmlu
evaluate``, ``mmlu_pro evaluate``: lm-evaluation-harness's task names) and ``python -m benchmarks
<command>`` for the commands on runs of any benchmark (``gate``). ``--help`` lists them.

A benchmark's commands are its server package's ``COMMANDS`` (benchmarks/<package>/server/, found
through benchmarks/registry.py); the others are benchmarks/server's ``COMMANDS``. Each maps a name
to an ``engine.documents.Command(module, help)``, whose module has ``add_arguments(parser)`` and
``run(args) -> exit status``. The older command lines through documents (``python -m engine mmlu
evaluate``, engine/__main__.py) run the same modules.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from benchmarks import registry, server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    first = parser.add_subparsers(dest="first", required=True, metavar="BENCHMARK or COMMAND")
    modules = {}
    for name, task in registry.tasks().items():
        commands = registry.server(name).COMMANDS
        sub = first.add_parser(name, help=f"commands of {task.title}").add_subparsers(dest="command", required=True)
        for command_name, command in commands.items():
            module = importlib.import_module(command.module)
            module.add_arguments(sub.add_parser(command_name, help=command.help, description=module.__doc__))
            modules[(name, command_name)] = module
    for command_name, command in server.COMMANDS.items():
        module = importlib.import_module(command.module)
        module.add_arguments(first.add_parser(command_name, help=command.help, description=module.__doc__))
        modules[(command_name, None)] = module
    args = parser.parse_args(argv)
    return modules[(args.first, getattr(args, "command", None))].run(args)


if __name__ == "__main__":
    sys.exit(main())
