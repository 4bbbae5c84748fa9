"""The math core as a JSON API, for clients without WebAssembly and for pages before the worker is ready.

    GET  /api/explainers                       the public functions, their parameters, and the
                                               runtime URLs the browser worker loads
    POST /api/explainers/<function>            JSON object of keyword arguments → {"result": ...}
    GET  /api/explainers/<function>?p=0.3&n=100   the same, for functions whose arguments are all
                                               plain numbers, words or true/false

Bad input is a 400 whose message names the argument; an unknown or non-public function is a 404.
A request's cost is bounded before the call (``check_cost``): at most MAX_ITEMS values in all its
lists together, and caps on the arguments that multiply the work (``ARGUMENT_CAPS``); over a
bound, a 400 names the argument and the limit. The functions themselves keep their own checks
(they also run in the browser, where a reader's own machine pays).
"""
from __future__ import annotations

import inspect
import typing

from flask import Blueprint, Flask, Response, abort, jsonify, request
from werkzeug.exceptions import MethodNotAllowed

import explainers
from explainers.registry import PUBLIC, call_public, describe

from . import math_core_page, openapi, python_runtime

bp = Blueprint("explainers_api", __name__, url_prefix="/api/explainers")

_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}
MAX_ITEMS = 20_000  # list and object values in one request's arguments, together
# Arguments whose size multiplies the work: function -> argument -> (largest value, why it is enough).
ARGUMENT_CAPS = {
    # the work grows with (words in text) x n; the default n is 8, and GPT-3's contamination study
    # (Brown et al. 2020, appendix C) used 13-grams
    "ngram_overlap": {"n": (50, "the default is 8; GPT-3's contamination study used 13")},
}


def _count_items(value, budget: int) -> int:
    """How many list and object values ``value`` holds (stops counting past ``budget``)."""
    stack, count = [value], 0
    while stack and count <= budget:
        item = stack.pop()
        if isinstance(item, dict):
            count += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            count += len(item)
            stack.extend(item)
    return count


def check_cost(fn_name: str, kwargs: dict) -> None:
    """Raise ValueError naming the limit when a call would cost more than one request may."""
    for name, value in kwargs.items():
        if _count_items(value, MAX_ITEMS) > MAX_ITEMS:
            raise ValueError(f"{name} holds more than {MAX_ITEMS:,} values, the limit per request; send fewer")
    for name, (largest, why) in ARGUMENT_CAPS.get(fn_name, {}).items():
        value = kwargs.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > largest:
            raise ValueError(f"{name} must be at most {largest} on this server ({why}), got {value}")


@bp.get("")
def index():
    return jsonify(version=explainers.__version__, functions=describe(), runtime=python_runtime.runtime_urls())


def _query_value(fn_name: str, name: str, raw: str):
    """Convert one query-string value to the type the function's signature asks for."""
    hints = typing.get_type_hints(PUBLIC[fn_name])
    wanted = hints.get(name)
    if wanted is str:
        return raw
    if wanted is bool:
        if raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise ValueError(f"{name} must be true or false, got {raw!r}")
    if wanted is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if wanted is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if wanted is None:
        return raw  # not a parameter: call_public names it as unknown
    raise ValueError(f"{name} takes a list or object; POST the arguments as a JSON object instead")


def _arguments(fn_name: str) -> dict:
    if request.method == "GET":
        kwargs = {}
        for name in request.args:
            values = request.args.getlist(name)
            if len(values) != 1:
                raise ValueError(f"{name} is given {len(values)} times; give it once")
            kwargs[name] = _query_value(fn_name, name, values[0])
        return kwargs
    if not request.is_json:
        raise ValueError("send the arguments as a JSON object with Content-Type: application/json")
    try:
        body = request.get_json(silent=True)
    except RecursionError:
        raise ValueError("the JSON body is nested too deeply") from None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object of keyword arguments, e.g. {\"p\": 0.25, \"n\": 100}")
    return body


def takes_get(fn_name: str) -> bool:
    """Whether a function's arguments all fit a query string (numbers, text, true/false): only those
    are offered by GET (and described so in /api/openapi.json); the others take a JSON POST."""
    hints = typing.get_type_hints(PUBLIC[fn_name])
    return all(hints.get(p.name) in (float, int, str, bool) for p in inspect.signature(PUBLIC[fn_name]).parameters.values())


@bp.route("/<fn_name>", methods=["GET", "POST", "OPTIONS"], provide_automatic_options=False)
def call(fn_name: str):
    if fn_name not in PUBLIC:
        abort(404, description=f"No public explainer function named {fn_name!r}; GET /api/explainers lists them.")
    allowed = ["GET", "HEAD", "OPTIONS", "POST"] if takes_get(fn_name) else ["OPTIONS", "POST"]
    if request.method == "OPTIONS":
        return Response(status=200, headers={"Allow": ", ".join(allowed)})
    if request.method not in allowed:  # a list or an object cannot be written in a query string
        raise MethodNotAllowed(allowed, description=f"{fn_name} takes lists or objects: POST its arguments "
                                                    "as a JSON object with Content-Type: application/json.")
    try:
        arguments = _arguments(fn_name)
        check_cost(fn_name, arguments)
        result = call_public(fn_name, arguments)
    except ValueError as error:
        abort(400, description=str(error))
    return jsonify(result=result)


def init_app(app: Flask) -> None:
    """Register the math core's web parts: this API, Pyodide's files and the wheel, and the /math-core page."""
    python_runtime.init_app(app)
    app.register_blueprint(bp)
    app.register_blueprint(math_core_page.bp)
    app.register_blueprint(openapi.bp)  # /api/openapi.json: this API and every blueprint's own routes
