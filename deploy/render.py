"""Write the nginx site configuration for this checkout (deploy/nginx-site.conf.template, filled in).

    python3 -m deploy.render --app 127.0.0.1:8000 --listen 80 --server-name papers.example.org \\
        > /etc/nginx/sites-enabled/annotated-papers.conf

Then start the app with TRUSTED_PROXIES=1 (and TRUSTED_HOSTS=papers.example.org) so it reads the
client's address from nginx's X-Forwarded-For.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from engine.config import REPO_ROOT
from engine.python_runtime import pyodide_version

TEMPLATE = Path(__file__).with_name("nginx-site.conf.template")


def render(app: str, listen: str, server_name: str = "_", pyodide_dir: Path | None = None) -> str:
    """The template with @APP@, @LISTEN@, @SERVER_NAME@, @REPO@, @PYODIDE_DIR@ and @PYODIDE_VERSION@ filled in."""
    pyodide_dir = Path(pyodide_dir or REPO_ROOT / "node_modules" / "pyodide").resolve()
    # Without Pyodide installed, no version matches: its URLs then fall through to the app (404).
    version = (pyodide_version(pyodide_dir) or "not-installed").replace(".", r"\.")
    values = {"@APP@": app, "@LISTEN@": listen, "@SERVER_NAME@": server_name, "@REPO@": str(REPO_ROOT),
              "@PYODIDE_DIR@": str(pyodide_dir), "@PYODIDE_VERSION@": version}
    text = TEMPLATE.read_text()
    for name, value in values.items():
        text = text.replace(name, value)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", default="127.0.0.1:8000", help="where app.py listens")
    parser.add_argument("--listen", default="80", help="nginx's listen parameter")
    parser.add_argument("--server-name", default="_")
    parser.add_argument("--pyodide-dir", type=Path, default=None)
    args = parser.parse_args()
    print(render(args.app, args.listen, args.server_name, args.pyodide_dir), end="")


if __name__ == "__main__":
    main()
