"""HTTP for the model itself (its questions are served by the papers that score them).

    GET  /api/model          the model's state: "not loaded", "loading", "ready" or "failed"
    POST /api/model/load     start warming the model up (a page calls this when a reader first uses it)
"""
from __future__ import annotations

from flask import Blueprint, jsonify

from . import service

bp = Blueprint("live_model", __name__)


@bp.get("/api/model")
def model_status():
    return jsonify(service().status())


@bp.post("/api/model/load")
def model_load():
    service().start()
    return jsonify(service().status()), 202
