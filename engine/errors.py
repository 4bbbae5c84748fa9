"""Friendly error pages for readers and JSON errors for API clients; never a stack trace."""
from __future__ import annotations

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, InternalServerError, RequestEntityTooLarge, ServiceUnavailable


def wants_json() -> bool:
    return request.path.startswith("/api/") or request.path.startswith("/oembed")


def init_app(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def handle_http_error(error: HTTPException):
        if wants_json():
            response = jsonify(error=error.description, status=error.code)
            response.status_code = error.code or 500
            return response
        return render_template("error.html", error=error), error.code

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
