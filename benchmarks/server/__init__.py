"""The benchmarks' shared web side: the one model service of an app, its routes, the benchmarks'
templates, and the commands about runs of any benchmark.

Every benchmark's routes score through :func:`service`; whichever document's hooks call
:func:`init_service` first makes it (one per app, so one worker owns the model), and the others
get the same one. The same call registers the benchmarks' templates (``TEMPLATES``): the pages and
parts a document includes by the name ``benchmarks/<path in this folder's parent>``
(``benchmarks/gate-widget.html``), served by the app as any blueprint's templates are.
"""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, current_app
from jinja2 import FileSystemLoader, PrefixLoader

from engine.documents import Command
from livescoring.model import ModelSettings
from livescoring.worker import ScoringService

PACKAGE = Path(__file__).resolve().parents[1]  # benchmarks/
# ``python -m benchmarks <command>`` (benchmarks/__main__.py): the commands on runs of any benchmark.
COMMANDS = {"gate": Command("benchmarks.server.gate_command",
                            "compare two runs (evaluate JSONL or harness sample logs): paired delta, "
                            "clustered standard error, verdict and shape")}
# No routes: the benchmarks' templates, by the name "benchmarks/<path>" (a blueprint's own loader).
TEMPLATES = Blueprint("benchmark_templates", __name__)
TEMPLATES.jinja_loader = PrefixLoader({PACKAGE.name: FileSystemLoader(str(PACKAGE))})


def init_service(app: Flask) -> ScoringService:
    """The one scoring service of this app (made on the first call), the model routes and the
    benchmarks' templates."""
    if "scoring" in app.extensions:
        return app.extensions["scoring"]
    from . import model_routes

    scoring = ScoringService(
        ModelSettings.from_config(app.config),
        queue_size=app.config["SCORER_QUEUE_SIZE"],
        timeout_s=app.config["SCORER_TIMEOUT_S"],
    )
    app.extensions["scoring"] = scoring
    app.register_blueprint(model_routes.bp)
    app.register_blueprint(TEMPLATES)
    if app.config["SCORER_LOAD_AT_START"]:
        scoring.start()
    return scoring


def service() -> ScoringService:
    return current_app.extensions["scoring"]
