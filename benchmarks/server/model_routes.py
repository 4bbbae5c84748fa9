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
_STATE = {"type": "object", "required": ["state", "message"], "properties": {
    "state": {"enum": ["not loaded", "loading", "ready", "failed"]}, "message": {"type": "string"},
    "queued": {"type": "integer"}, "model": {"type": "object"},
    "restarting": {"type": "boolean", "description": "loading because the model server is being started again"}}}
_ERROR = {"$ref": "#/components/schemas/Error"}
bp.openapi = {  # collected into /api/openapi.json (engine/openapi.py)
    "/api/model": {"get": {"operationId": "model_status", "summary": "the model's state", "responses": {
        "200": {"description": "the state", "content": {"application/json": {"schema": _STATE}}}}}},
    "/api/model/load": {"post": {"operationId": "model_load", "summary": "start warming the model up", "responses": {
        "202": {"description": "loading (or already loaded)", "content": {"application/json": {"schema": _STATE}}},
        "403": {"description": "sent from another site's page", "content": {"application/json": {"schema": _ERROR}}}}}},
}


@bp.get("/api/model")
def model_status():
    return jsonify(service().status(fresh=True))  # what a live form polls while the model comes back


@bp.post("/api/model/load")
def model_load():
    require_same_origin()
    service().start()
    return jsonify(service().status()), 202
