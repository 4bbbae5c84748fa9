"""The model service's command line.

    python -m livescoring serve [--host 127.0.0.1] [--port 8001] [--api-key KEY] [--prefix-cache-mib 256]

``serve`` runs the model server (server.py): one process owning the model, speaking the OpenAI API
subset of vLLM's server. The model settings are the site's (SCORER_MODEL, SCORER_DEVICE,
SCORER_DTYPE, SCORER_THREADS, SCORER_MAX_CONTEXT, MODEL_CACHE_DIR), read from the environment or
given as flags.
"""
from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from .model import PACKAGED_MODEL, ModelSettings
from .model_thread import MAX_WAITING
from .prompt_reader import CACHE_BYTES
from .server import serve


def _settings(args) -> ModelSettings:
    return ModelSettings(model=args.model, device=args.device, dtype=args.dtype, threads=args.threads,
                         cache_dir=Path(args.cache_dir) if args.cache_dir else None, max_context=args.max_context)


def main(argv=None) -> None:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m livescoring", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve the model over the OpenAI API subset")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8001)
    run.add_argument("--api-key", default=env("MODEL_SERVER_API_KEY") or None,
                     help="require 'Authorization: Bearer KEY' on every route but /health (or MODEL_SERVER_API_KEY)")
    run.add_argument("--served-model-name", default=None, help="the name /v1/models gives (default: --model)")
    run.add_argument("--model", default=env("SCORER_MODEL", PACKAGED_MODEL))
    run.add_argument("--device", default=env("SCORER_DEVICE", "auto"))
    run.add_argument("--dtype", default=env("SCORER_DTYPE", "auto"))
    run.add_argument("--threads", type=int, default=int(env("SCORER_THREADS", str(os.cpu_count() or 1))),
                     help="torch threads for the model")
    run.add_argument("--max-context", type=int, default=int(env("SCORER_MAX_CONTEXT", "0")),
                     help="cap on the model's context (0: its own)")
    run.add_argument("--cache-dir", default=env("MODEL_CACHE_DIR", str(Path.home() / ".cache" / "annotated-papers")),
                     help="where converted weights are kept")
    run.add_argument("--prefix-cache-mib", type=int, default=CACHE_BYTES // 2**20,
                     help="bytes of cached prompt blocks (keys, values and log-probabilities), in MiB")
    run.add_argument("--max-waiting", type=int, default=MAX_WAITING, help="requests that may wait; beyond, 429")
    run.add_argument("--max-prompt-tokens", type=int, default=0, help="a longer prompt gets 413 (0: the context length)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    serve(_settings(args), args.host, args.port, api_key=args.api_key, served_name=args.served_model_name,
          cache_bytes=args.prefix_cache_mib * 2**20, max_waiting=args.max_waiting,
          max_prompt_tokens=args.max_prompt_tokens)


if __name__ == "__main__":
    main()
