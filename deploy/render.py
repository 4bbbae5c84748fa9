"""Fill in deploy/'s templates for this checkout: nginx's two sites and the systemd units.

    # the public front: nginx in front of the site (python3 app.py)
    python3 -m deploy.render --app 127.0.0.1:8000 --listen 80 --server-name papers.example.org \\
        > /etc/nginx/sites-enabled/annotated-papers.conf
    # the model balancer: nginx over N model servers, on a private address (MODEL_SERVER_URL names it)
    python3 -m deploy.render model-balancer --model-server 10.0.0.2:8001 10.0.0.3:8001 \\
        --listen 127.0.0.1:8100 > /etc/nginx/sites-enabled/annotated-papers-model.conf
    # systemd: the web tier, and one model server per port (annotated-papers-model@8001, ...)
    python3 -m deploy.render web-unit --model-server-url http://127.0.0.1:8100 \\
        > /etc/systemd/system/annotated-papers-web.service
    python3 -m deploy.render model-unit --model-host 10.0.0.2 \\
        > /etc/systemd/system/annotated-papers-model@.service

Then start the app with TRUSTED_PROXIES=1 (and TRUSTED_HOSTS=papers.example.org) so it reads the
client's address from nginx's X-Forwarded-For (the web unit sets TRUSTED_PROXIES). docs/security.md,
"Serving on an open network", says what each part does.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.config import REPO_ROOT
from engine.python_runtime import pyodide_version

HERE = Path(__file__).parent
TEMPLATE = HERE / "nginx-site.conf.template"
MODEL_TEMPLATE = HERE / "nginx-model.conf.template"
WEB_UNIT = HERE / "annotated-papers-web.service.template"
MODEL_UNIT = HERE / "annotated-papers-model@.service.template"
ADDRESS = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})")
# A model server that fails once (refused, reset, timed out, 502/503) is left out this long.
FAIL_TIMEOUT_S = 10


def fill(template: Path, values: dict[str, str]) -> str:
    """``template``'s text with each @NAME@ of ``values`` replaced (the one way every template is filled)."""
    text = template.read_text()
    for name, value in values.items():
        text = text.replace(f"@{name}@", value)
    return text


def render(app: str, listen: str, server_name: str = "_", pyodide_dir: Path | None = None) -> str:
    """The public front with @APP@, @LISTEN@, @SERVER_NAME@, @REPO@, @PYODIDE_DIR@ and @PYODIDE_VERSION@ filled in."""
    pyodide_dir = Path(pyodide_dir or REPO_ROOT / "node_modules" / "pyodide").resolve()
    # Without Pyodide installed, no version matches: its URLs then fall through to the app (404).
    version = (pyodide_version(pyodide_dir) or "not-installed").replace(".", r"\.")
    return fill(TEMPLATE, {"APP": app, "LISTEN": listen, "SERVER_NAME": server_name, "REPO": str(REPO_ROOT),
                           "PYODIDE_DIR": str(pyodide_dir), "PYODIDE_VERSION": version})


def check_address(address: str) -> tuple[str, int]:
    """``host:port`` (an IPv6 host in brackets) as (host, port), or ValueError saying what to write."""
    match = ADDRESS.fullmatch(address)
    if not match or not 0 < int(match.group(2)) < 65536:
        raise ValueError(f"{address!r} is not HOST:PORT (e.g. 10.0.0.2:8001, [fd00::2]:8001)")
    return match.group(1), int(match.group(2))


def render_model_balancer(servers: Sequence[str], listen: str = "127.0.0.1:8100") -> str:
    """The model balancer over ``servers`` (HOST:PORT each), listening on ``listen``."""
    if not servers:
        raise ValueError("name at least one model server (--model-server HOST:PORT)")
    for address in servers:
        check_address(address)
    if len(set(servers)) != len(servers):
        raise ValueError("a model server is named twice (it would take a double share of the keys)")
    lines = "\n".join(f"    server {address} max_fails=1 fail_timeout={FAIL_TIMEOUT_S}s;" for address in servers)
    return fill(MODEL_TEMPLATE, {"MODEL_SERVERS": lines, "LISTEN": listen})


def render_web_unit(app: str = "127.0.0.1:8000", model_server_url: str = "http://127.0.0.1:8100",
                    user: str = "annotated-papers", python: str = sys.executable) -> str:
    host, port = check_address(app)
    if not re.fullmatch(r"https?://\S+", model_server_url):
        raise ValueError(f"--model-server-url {model_server_url!r} is not an http:// or https:// URL")
    return fill(WEB_UNIT, {"REPO": str(REPO_ROOT), "USER": user, "PYTHON": python, "APP_HOST": host.strip("[]"),
                           "APP_PORT": str(port), "MODEL_SERVER_URL": model_server_url})


def render_model_unit(model_host: str = "127.0.0.1", user: str = "annotated-papers", python: str = sys.executable) -> str:
    check_address(f"{model_host}:1")
    return fill(MODEL_UNIT, {"REPO": str(REPO_ROOT), "USER": user, "PYTHON": python, "MODEL_HOST": model_host.strip("[]")})


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python3 -m deploy.render", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", nargs="?", default="site", choices=("site", "model-balancer", "web-unit", "model-unit"),
                        help="which file to write (default: site, the public front)")
    parser.add_argument("--app", default="127.0.0.1:8000", help="where app.py listens (site, web-unit)")
    parser.add_argument("--listen", default=None,
                        help="nginx's listen parameter (default: 80 for the site, 127.0.0.1:8100 for the balancer)")
    parser.add_argument("--server-name", default="_", help="the site's host name (site)")
    parser.add_argument("--pyodide-dir", type=Path, default=None, help="(site)")
    parser.add_argument("--model-server", action="extend", nargs="+", default=[], metavar="HOST:PORT",
                        help="a model server behind the balancer (model-balancer; one or several)")
    parser.add_argument("--model-server-url", default="http://127.0.0.1:8100",
                        help="the web tier's MODEL_SERVER_URL: the balancer (web-unit)")
    parser.add_argument("--model-host", default="127.0.0.1",
                        help="the address a model server listens on: one the balancer reaches (model-unit)")
    parser.add_argument("--user", default="annotated-papers", help="the user the service runs as (units)")
    parser.add_argument("--python", default=sys.executable, help="the Python the service runs (units)")
    args = parser.parse_args(argv)
    try:
        if args.what == "site":
            text = render(args.app, args.listen or "80", args.server_name, args.pyodide_dir)
        elif args.what == "model-balancer":
            text = render_model_balancer(args.model_server, args.listen or "127.0.0.1:8100")
        elif args.what == "web-unit":
            text = render_web_unit(args.app, args.model_server_url, args.user, args.python)
        else:
            text = render_model_unit(args.model_host, args.user, args.python)
    except ValueError as error:
        parser.error(str(error))
    print(text, end="")


if __name__ == "__main__":
    main()
