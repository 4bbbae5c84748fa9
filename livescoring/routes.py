"""HTTP for the model itself (its questions are served by the papers that score them).

    GET  /api/model          the model's state: "not loaded", "loading", "ready" or "failed"
    POST /api/model/load     start warming the model up (a page calls this when a reader first uses it);
                             only from the site's own pages (another site's cannot make it load)
"""
from __future__ import annotations

from flask import Blueprint, jsonify

from engine.security import require_same_origin

from . import service

bp = Blueprint("live_model", __name__)


@bp.get("/api/model")
def model_status():
    return jsonify(service().status())


@bp.post("/api/model/load")
def model_load():
    require_same_origin()
    service().start()
    return jsonify(service().status()), 202
