"""Friendly error pages for readers and JSON errors for API clients; never a stack trace."""
from __future__ import annotations

from flask import Flask, Request, jsonify, render_template, request
from werkzeug.exceptions import (
    BadRequest,
    HTTPException,
    InternalServerError,
    MethodNotAllowed,
    RequestEntityTooLarge,
    ServiceUnavailable,
)

MAX_JSON_DEPTH = 32  # arrays and objects inside each other; no route takes more than a few


class NestedTooDeeply(BadRequest, RecursionError):
    """A JSON body nested deeper than MAX_JSON_DEPTH (or than the parser can go): a 400 wherever it is
    read. Also a RecursionError, so a route that already catches that one words it in its own way."""

    description = f"The JSON body is nested too deeply (more than {MAX_JSON_DEPTH} levels); send a flat object."


def json_depth_over(value, limit: int) -> bool:
    """Whether lists and dicts in ``value`` nest deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


class SiteRequest(Request):
    """Every route's request: JSON nested too deeply is refused here, in one place, for all of them
    (the parser's RecursionError used to be a 500 on each route that did not catch it)."""

    def get_json(self, force: bool = False, silent: bool = False, cache: bool = True):
        try:
            body = super().get_json(force=force, silent=silent, cache=cache)
        except RecursionError:
            raise NestedTooDeeply() from None
        if json_depth_over(body, MAX_JSON_DEPTH):
            raise NestedTooDeeply()
        return body


def wants_json() -> bool:
    return request.path.startswith("/api/") or request.path.startswith("/oembed")


def init_app(app: Flask) -> None:
    app.request_class = SiteRequest

    @app.errorhandler(HTTPException)
    def handle_http_error(error: HTTPException):
        if wants_json():
            response = jsonify(error=error.description, status=error.code)
            response.status_code = error.code or 500
        else:
            response = app.make_response((render_template("error.html", error=error), error.code))
        if isinstance(error, MethodNotAllowed) and error.valid_methods:  # RFC 9110: a 405 names what is allowed
            response.headers["Allow"] = ", ".join(sorted(set(error.valid_methods)))
        retry_after = dict(error.get_headers()).get("Retry-After")  # a 429 or 503 says when to come back
        if retry_after:
            response.headers["Retry-After"] = retry_after
        return response

    # A document's hooks may name errors that mean "its data is not here" (UNAVAILABLE): the
    # reader gets a 503 with the message (which says how to get the data), the rest of the site works.
    for document in app.extensions["documents"].values():
        for kind in document.hooks.unavailable:
            app.register_error_handler(kind, lambda error: handle_http_error(ServiceUnavailable(str(error))))

    @app.before_request
    def refuse_oversized_bodies():
        # Checked up front for every route, also those that never read their body.
        limit = app.config["MAX_CONTENT_LENGTH"]
        if request.content_length is not None and request.content_length > limit:
            raise RequestEntityTooLarge(f"The request body is larger than {limit // 1024} KiB; send less.")

    @app.errorhandler(Exception)
    def handle_unexpected(error: Exception):
        # The path is cut short: an attacker's 10 KB paths must not each write 10 KB of log.
        app.logger.exception("unhandled error on %.200s", request.path)
        return handle_http_error(InternalServerError("Something went wrong on our side. Please try again."))
