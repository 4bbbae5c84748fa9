"""The JSON API described as OpenAPI 3.0, served at /api/openapi.json.

The math core's part is generated from the public functions' signatures (explainers.registry),
so it cannot drift from them; every other blueprint describes its own routes in an ``openapi``
attribute (a dict of OpenAPI path items), collected here, so the engine names no paper.
tests/test_openapi.py feeds the document to schemathesis, which generates requests from it.
"""
from __future__ import annotations

import inspect
import typing

from flask import Blueprint, current_app, jsonify

import explainers
from explainers.registry import PUBLIC

bp = Blueprint("openapi", __name__)

ERROR = {"type": "object", "required": ["error", "status"],
         "properties": {"error": {"type": "string"}, "status": {"type": "integer"}, "field": {"type": "string"},
                        "problems": {"type": "array", "items": {  # every field's error, when there are several
                            "type": "object", "properties": {"field": {"type": "string"}, "error": {"type": "string"}}}}}}
JSON_OBJECT = {"type": "object"}


def json_response(description: str, schema: dict | None = None) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema or JSON_OBJECT}}}


def error(description: str) -> dict:
    return json_response(description, {"$ref": "#/components/schemas/Error"})


def _schema(hint) -> dict:
    """The JSON schema of one Python type hint of a public function."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    simple = {float: {"type": "number"}, int: {"type": "integer"}, str: {"type": "string"}, bool: {"type": "boolean"}}
    if hint in simple:
        return dict(simple[hint])
    if origin is list:
        return {"type": "array", "items": _schema(args[0]) if args else {}}
    if origin is dict or hint is dict:
        return {"type": "object", "additionalProperties": _schema(args[1]) if len(args) == 2 else {}}
    return {}


def _explainer_paths() -> dict:
    paths = {}
    for name, fn in PUBLIC.items():
        hints = typing.get_type_hints(fn)
        parameters = inspect.signature(fn).parameters.values()
        properties = {p.name: _schema(hints.get(p.name)) for p in parameters}
        required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
        summary = (fn.__doc__ or "").strip().splitlines()[0]
        answers = {"200": json_response("the result", {"type": "object", "properties": {"result": {}}}),
                   "400": error("an argument is missing, unknown, of the wrong type or out of range (named)")}
        item = {"post": {
            "operationId": f"explainers_{name}", "summary": summary, "responses": answers,
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}},
        }}
        if all(schema.get("type") in ("number", "integer", "string", "boolean") for schema in properties.values()):
            item["get"] = {"operationId": f"explainers_{name}_get", "summary": summary, "responses": answers,
                           "parameters": [{"name": p.name, "in": "query", "required": p.name in required,
                                           "schema": properties[p.name]} for p in parameters]}
        paths[f"/api/explainers/{name}"] = item
    paths["/api/explainers"] = {"get": {"operationId": "explainers_index", "summary": "the public functions",
                                        "responses": {"200": json_response("functions and runtime URLs")}}}
    return paths


def _widget_paths() -> dict:
    """The engine's own widget routes (every paper's widgets)."""
    def text(name: str, where: str = "path", required: bool = True) -> dict:
        return {"name": name, "in": where, "required": required, "schema": {"type": "string"}}

    pixels = {"type": "string", "pattern": "^[0-9]{1,6}$"}
    return {
        "/api/widgets/{slug}/{name}": {"get": {
            "operationId": "widget_view", "summary": "a widget's view for the state in the query",
            "parameters": [text("slug"), text("name"),
                           {"name": "width", "in": "query", "schema": pixels,
                            "description": "CSS pixels to lay the figure out for (240 to 1600; default 640)"}],
            "responses": {"200": json_response("summary sentences, scene and numbers"),
                          "404": error("no such paper or widget, or one the API does not draw")}}},
        "/oembed": {"get": {
            "operationId": "oembed", "summary": "oEmbed 1.0 for a widget page URL",
            "parameters": [text("url", "query"), {"name": "format", "in": "query", "schema": {"enum": ["json"]}},
                           {"name": "maxwidth", "in": "query", "schema": pixels},
                           {"name": "maxheight", "in": "query", "schema": pixels}],
            "responses": {"200": json_response("a rich oEmbed answer"),
                          "400": error("no url, another format, or a size that is not a whole number"),
                          "404": error("the URL is not a widget page of this site")}}},
    }


def document() -> dict:
    paths = {**_explainer_paths(), **_widget_paths()}
    for blueprint in current_app.blueprints.values():
        paths.update(getattr(blueprint, "openapi", {}))
    return {
        "openapi": "3.0.3",
        "info": {"title": "Annotated papers JSON API", "version": explainers.__version__,
                 "description": "Every 4xx is JSON with an error message; bodies over 64 KiB are refused with 413."},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": {"Error": ERROR}},
    }


@bp.get("/api/openapi.json")
def openapi_json():
    return jsonify(document())
