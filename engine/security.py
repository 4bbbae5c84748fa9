"""Security headers on every response.

The Content-Security-Policy allows no inline script or style and no eval; Pyodide needs only
'wasm-unsafe-eval' (to compile WebAssembly) and a worker from our own origin. Pages refuse to be
framed, except the widget pages under /embed/, which any site may frame.
"""
from __future__ import annotations

from flask import Flask, Response, request

_BASE_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'"
)


def content_security_policy(path: str) -> str:
    ancestors = "*" if path.startswith("/embed/") else "'none'"
    return f"{_BASE_POLICY}; frame-ancestors {ancestors}"


def add_security_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = content_security_policy(request.path)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
    response.headers["Permissions-Policy"] = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"
    response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
    if not request.path.startswith("/embed/"):
        response.headers["X-Frame-Options"] = "DENY"
    return response


def init_app(app: Flask) -> None:
    app.after_request(add_security_headers)
