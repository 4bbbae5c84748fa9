"""Friendly error pages for readers and JSON errors for API clients; never a stack trace."""
from __future__ import annotations

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException, InternalServerError


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

    @app.errorhandler(Exception)
    def handle_unexpected(error: Exception):
        app.logger.exception("unhandled error on %s", request.path)
        return handle_http_error(InternalServerError("Something went wrong on our side. Please try again."))
