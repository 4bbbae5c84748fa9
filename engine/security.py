"""Security headers on every response, a checked Host header, and cross-site request checks.

The Content-Security-Policy allows no inline script or style and no eval; Pyodide needs only
'wasm-unsafe-eval' (to compile WebAssembly) and a worker from our own origin. Pages refuse to be
framed, except the widget pages under /embed/, which any site may frame.

The Host header is checked before Flask sees the request (``HostCheck``): a malformed one (a port
past 65535, an empty label) would otherwise fail inside URL building, as a 500 without these
headers, and with ``TRUSTED_HOSTS`` set only those names may appear in the absolute URLs the site
writes (share links, oEmbed). State-changing POSTs call :func:`require_same_origin`, and forms
carry a token from :func:`csrf_token` that is bound to the client's address, so another site can
neither post the form from its visitors' browsers nor reuse a token it fetched for itself.

:func:`client_key` names the client whose share a request spends (the model's queue and generation
time): its IPv4 address, or the /64 network of its IPv6 address (a host is usually handed a whole
/64, so its addresses there are one client).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
import time
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request
from markupsafe import Markup
from werkzeug.exceptions import Forbidden
from werkzeug.middleware.proxy_fix import ProxyFix

_BASE_POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'"
)
# A DNS name (labels of letters, digits and hyphens, 1 to 63 characters) or a bracketed IPv6
# address, then an optional port; werkzeug's own checks come later and fail as exceptions.
_HOST = re.compile(r"(?P<name>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
                   r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")
_TOKEN = re.compile(r"[0-9a-f]{32}")
CSRF_WINDOW_S = 6 * 3600  # a token is good for this long, and for one window more


IPV6_CLIENT_PREFIX = 64  # an IPv6 client is its /64: one host (or one home's router) gets a whole /64


def client_key(address: str | None) -> str | None:
    """The key of the client at ``address`` (a request's ``remote_addr``) for its fair shares: an
    IPv4 address as it is; an IPv6 address as its /64 network ("2001:db8:1:2::/64"), so the 2**64
    addresses one host can take are one client; an IPv4-mapped IPv6 address as its IPv4 address.
    Anything else (a Unix socket's name, None) is its own key, as before."""
    try:
        ip = ipaddress.ip_address((address or "").split("%", 1)[0])  # a link-local zone (%eth0) names no host
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.IPv6Network((ip, IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)


def content_security_policy(path: str) -> str:
    ancestors = "*" if path.startswith("/embed/") else "'none'"
    return f"{_BASE_POLICY}; frame-ancestors {ancestors}"


def security_headers(path: str) -> dict[str, str]:
    headers = {
        "Content-Security-Policy": content_security_policy(path),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "strict-origin-when-cross-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
        "Cross-Origin-Opener-Policy": "same-origin",
    }
    if not path.startswith("/embed/"):
        headers["X-Frame-Options"] = "DENY"
    return headers


def add_security_headers(response: Response) -> Response:
    response.headers.update(security_headers(request.path))
    return response


def host_problem(host: str, trusted: tuple[str, ...]) -> str | None:
    """Why a Host header value cannot be used to write absolute URLs, or None when it can."""
    match = _HOST.fullmatch(host)
    if match is None or len(host) > 255:
        return "The Host header is not a valid host name."
    if match["port"] is not None and int(match["port"]) > 65535:
        return "The Host header's port is larger than 65535."
    if "xn--" in host.lower():  # a punycode label must decode (werkzeug decodes it to build URLs)
        try:
            match["name"].rstrip(".").lower().encode("ascii").decode("idna")  # werkzeug lowercases it first
        except UnicodeError:
            return "The Host header has a label that is not valid punycode (xn--…)."
    if trusted and match["name"].rstrip(".").lower() not in trusted:
        return "This site does not answer to that host name."
    return None


class HostCheck:
    """WSGI middleware: a request whose Host header is malformed (or, with TRUSTED_HOSTS set, not
    one of them) is answered 400 here, with the security headers, before Flask builds URLs from it."""

    def __init__(self, wsgi_app, trusted: tuple[str, ...]):
        self.wsgi_app = wsgi_app
        self.trusted = tuple(name.lower() for name in trusted)

    def __call__(self, environ, start_response):
        host = environ.get("HTTP_HOST")
        # Without a Host header (HTTP/1.0) URLs are built from the server's own name: nothing to check.
        problem = None if host is None else host_problem(host, self.trusted)
        if problem is None:
            return self.wsgi_app(environ, start_response)
        path = environ.get("PATH_INFO", "")
        if path.startswith(("/api/", "/oembed")):
            body, mimetype = json.dumps({"error": problem, "status": 400}).encode(), "application/json"
        else:
            body, mimetype = f"Bad request: {problem}\n".encode(), "text/plain; charset=utf-8"
        headers = [("Content-Type", mimetype), ("Content-Length", str(len(body))), ("Cache-Control", "no-store"),
                   *security_headers(path).items()]
        start_response("400 Bad Request", headers)
        return [body]


def require_same_origin() -> None:
    """Refuse (403) a POST that a browser sent from a page of another site.

    Browsers send Origin on every cross-site POST (and Referer unless told not to); a client
    that sends neither is not a browser acting for a visitor, so there is nothing to forge.
    """
    claimed = request.headers.get("Origin") or request.headers.get("Referer")
    if claimed is None:
        return
    # The whole origin is compared: scheme, host and port (another port of one host is another site).
    # Behind deploy/'s nginx, X-Forwarded-Proto and X-Forwarded-Port give the ones the browser used.
    own = origin_of(f"{request.scheme}://{request.host}")
    if claimed == "null" or own is None or origin_of(claimed) != own:
        raise Forbidden("This request came from a page of another site; use the form on this site instead.")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of a URL, the port filled in from the scheme; None when it cannot be read."""
    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port that is not a number or past 65535
        return None
    return (scheme, host.rstrip("."), port) if scheme and host else None


def _csrf_digest(window: int) -> str:
    key = current_app.config["SECRET_KEY"]
    key = key.encode() if isinstance(key, str) else key
    message = f"{request.remote_addr}|{window}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:32]


def csrf_token() -> str:
    """A form token for this client, good for CSRF_WINDOW_S to twice that."""
    return _csrf_digest(int(time.time() // CSRF_WINDOW_S))


CSRF_FIELD = "csrf_token"  # the hidden field of every form whose POST starts work on the server


def csrf_input() -> Markup:
    """The hidden CSRF field for a form (templates: {{ csrf_input() }})."""
    return Markup(f'<input type="hidden" name="{CSRF_FIELD}" value="{csrf_token()}">')


def csrf_token_valid(token: str | None) -> bool:
    # Any token we wrote is 32 hex digits; anything else (non-ASCII above all, which
    # hmac.compare_digest refuses with a TypeError) is simply not a valid token.
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        return False
    window = int(time.time() // CSRF_WINDOW_S)
    return any(hmac.compare_digest(token, _csrf_digest(w)) for w in (window, window - 1))


def init_app(app: Flask) -> None:
    app.after_request(add_security_headers)
    app.jinja_env.globals["csrf_input"] = csrf_input
    app.wsgi_app = HostCheck(app.wsgi_app, app.config["TRUSTED_HOSTS"])
    hops = app.config["TRUSTED_PROXIES"]
    if hops:  # behind nginx (deploy/): the client's address and scheme come from its headers
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_port=hops)
