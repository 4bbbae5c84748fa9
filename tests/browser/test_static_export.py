"""The real documents exported as static files (engine/export.py), once for this module, and served
with no Flask running: under a sub-path (/courses/ml/papers/) by Python's http.server and by nginx
serving files only, and at / by http.server.

Every page and file the export names answers 200 with a type the browser accepts, under each of the
three (a crawl of the links, the scripts' imports and the runtime's index); then
tests/browser/static-export.mjs reads the sub-path copy in Chromium at 360 and 1280 px (no failed
request, none to another origin, every widget redrawn by the worker, axe clean).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urljoin, urlsplit
from xml.etree import ElementTree

import pytest
from documents.mmlu.widgets import prompt_anatomy

from benchmarks.mmlu.server import data_dir as mmlu_data_dir
from benchmarks.mmlu.server.reader import MMLUData
from benchmarks.server.runfile import read_rows
from deploy.local import NGINX, running_nginx
from engine.export import export
from tools.launcher import free_port
from widgetkit import run_view

REPO_ROOT = Path(__file__).resolve().parents[2]
SUB_PATH = "/courses/ml/papers/"
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("static-export")]
# A static host chooses the type by the suffix: these must be what the browser insists on.
TYPES = {".html": "text/html", ".js": "javascript", ".mjs": "javascript", ".wasm": "application/wasm",
         ".css": "text/css", ".zip": "application/zip"}
# Relative imports and the addresses scripts build from their own (new URL('…', import.meta.url)).
_MODULE_ADDRESS = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|new URL\(\s*)(["'])(\.{1,2}/[^"'\s]+)\1""")


# The LMS side of the SCORM test: the scorm-again npm package (its SCORM 1.2 run-time API).
SCORM_AGAIN = Path(os.environ.get("SCORM_AGAIN_DIR", REPO_ROOT / "node_modules" / "scorm-again"))
PACKAGED = ("mmlu", "chance-explorer")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The export, laid out as a host's files: <root>/courses/ml/papers/ is the exported folder;
    beside it a widget's plain package unzipped in <root>/plain/, and its SCORM package in
    <root>/lms/scorm/ with scorm-again's script in <root>/lms/, as a learning platform would serve them."""
    root = tmp_path_factory.mktemp("static-host")
    folder = root / SUB_PATH.strip("/")
    # One widget's packages (two files of 6 MiB): every package is made by the same code, and all 28
    # cost this module about 180 MiB of writing and crawling for nothing more.
    report = export(folder, packages=["/".join(PACKAGED)])
    print(report.line())
    slug, name = PACKAGED
    with zipfile.ZipFile(folder / "packages" / slug / f"{name}.zip") as plain:
        plain.extractall(root / "plain")
    with zipfile.ZipFile(folder / "packages" / slug / f"{name}-scorm12.zip") as scorm:
        scorm.extractall(root / "lms" / "scorm")
    if (SCORM_AGAIN / "dist" / "scorm12.min.js").exists():
        shutil.copy(SCORM_AGAIN / "dist" / "scorm12.min.js", root / "lms" / "scorm12.min.js")
    (root / "lms" / "index.html").write_text("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                                             "<link rel=\"icon\" href=\"data:,\"><title>A learning platform</title></head>"
                                             "<body><main></main></body></html>")
    return root, folder


def test_a_widgets_packages_hold_what_they_run_on(site):
    """Both packages are valid zips of the same widget; the SCORM one has a SCORM 1.2 manifest
    whose launch page and files are in it; the plain one, served from a folder, answers every
    address its pages name (a crawl, as for the whole export)."""
    root, folder = site
    slug, name = PACKAGED
    launch = f"embed/{slug}/{name}.html"
    with zipfile.ZipFile(folder / "packages" / slug / f"{name}-scorm12.zip") as scorm:
        assert scorm.testzip() is None
        manifest = ElementTree.fromstring(scorm.read("imsmanifest.xml"))
        names = set(scorm.namelist())
    ns = {"cp": "http://www.imsproject.org/xsd/imscp_rootv1p1p2", "adlcp": "http://www.adlnet.org/xsd/adlcp_rootv1p2"}
    assert manifest.findtext("cp:metadata/cp:schemaversion", namespaces=ns) == "1.2"
    resource = manifest.find("cp:resources/cp:resource", ns)
    assert resource.get("href") == launch and resource.get(f"{{{ns['adlcp']}}}scormtype") == "sco"
    assert {f.get("href") for f in resource.findall("cp:file", ns)} == names - {"imsmanifest.xml"}
    assert "static/js/widgets/scorm.js" in (root / "lms" / "scorm" / launch).read_text()
    assert sorted(str(p.relative_to(folder)) for p in (folder / "packages").rglob("*")) == [
        f"packages/{slug}", f"packages/{slug}/{name}-scorm12.zip", f"packages/{slug}/{name}.zip"]
    assert "Download for a lesson" in (folder / slug / "widgets" / f"{name}.html").read_text()
    assert "Download for a lesson" not in (folder / slug / "widgets" / "calibration-bars.html").read_text()
    assert "scorm.js" not in (root / "plain" / launch).read_text()
    with http_server(root / "plain") as origin:
        runtime = sorted(str(p.relative_to(root / "plain")) for p in (root / "plain" / "pyodide").rglob("*") if p.is_file())
        statuses = crawl([f"{origin}/", f"{origin}/{launch}", *(f"{origin}/{n}" for n in runtime)])
    assert sorted(url for url, status in statuses.items() if status != 200) == []
    assert any(url.endswith(".whl") for url in statuses)


@contextmanager
def http_server(directory: Path):
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                "--directory", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except OSError:
                subprocess.run(["sleep", "0.05"])
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def nginx_serving(root: Path, tmp_path: Path):
    """nginx serving ``root``'s files and nothing else. Debian's mime.types has no .mjs (Pyodide's
    module): a host serving the export must type it as JavaScript, as docs/static-export.md says."""
    port = free_port()
    site = f"""server {{
  listen 127.0.0.1:{port};
  root {root};
  location ~ \\.mjs$ {{ types {{ }} default_type text/javascript; }}
}}"""
    with running_nginx(site, port, tmp_path):
        yield f"http://127.0.0.1:{port}"


class _Addresses(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value and (name in ("href", "src", "action") or (name.startswith("data-") and name.endswith(("-url", "script")))):
                self.found.append(value)


def crawl(starts: list[str]) -> dict[str, int]:
    """Every address reachable from ``starts`` on their origin: {url: status}. Fails on a wrong type."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(starts[0]))
    todo, statuses = list(starts), {}
    while todo:
        url = todo.pop()
        if url in statuses:
            continue
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body, kind, statuses[url] = response.read(), response.headers.get("Content-Type", ""), response.status
        except HTTPError as error:
            statuses[url] = error.code
            continue
        path = urlsplit(url).path
        suffix = ".html" if path.endswith("/") else Path(path).suffix
        assert TYPES.get(suffix, "") in kind, f"{url} is served as {kind!r}"
        if suffix == ".html":
            parser = _Addresses()
            parser.feed(body.decode())
            named = parser.found
        elif suffix in (".js", ".mjs") and "/pyodide/" not in path:
            named = [m.group(2) for m in _MODULE_ADDRESS.finditer(body.decode())]
        elif path.endswith("/api/python-runtime"):
            named = [v for v in json.loads(body).values() if isinstance(v, str) and "/" in v and not v.endswith("/")]
        else:
            named = []
        for address in named:
            target = urljoin(url, address).split("#")[0].split("?")[0]
            if target.startswith(origin + "/") and target not in statuses:
                todo.append(target)
    return statuses


@pytest.mark.parametrize("served", ["http.server at a sub-path", "nginx at a sub-path", "http.server at /"])
def test_every_address_in_the_export_answers(site, served, tmp_path):
    root, folder = site
    if served.startswith("nginx") and not Path(NGINX).exists():
        pytest.skip("nginx is not installed (tests/run.sh installs it)")
    host = nginx_serving(root, tmp_path) if served.startswith("nginx") else http_server(root if "sub-path" in served else folder)
    pages = sorted(str(p.relative_to(folder)).removesuffix("index.html") for p in folder.rglob("*.html"))
    with host as origin:
        base = origin + (SUB_PATH if "sub-path" in served else "/")
        # Every page and all they name; and Pyodide's files, which its loader names at run time.
        runtime = sorted(str(p.relative_to(folder)) for p in (folder / "pyodide").rglob("*") if p.is_file())
        statuses = crawl([base + name for name in pages + runtime])
    missing = sorted(url for url, status in statuses.items() if status != 200)
    assert not missing, missing
    # the home page, the math core, each document (with sources shown), glossary, gallery, widget pages and embeds
    assert len(pages) >= 48, pages
    assert any(url.endswith("/pyodide.mjs") for url in statuses) and any(url.endswith(".whl") for url in statuses)


def published_answer(subject: str, number: int, run: str, benchmark: str = "mmlu") -> dict:
    """What the published run file says for a test question (number from 1), for the page to show."""
    rows = read_rows(REPO_ROOT / "benchmarks" / benchmark / "runs" / f"{run}.jsonl.gz")
    row = next(r for r in rows if r.get("subject", r.get("category")) == subject and r["index"] == number - 1)
    return {"subject": subject, "number": number, "run": run, "prediction": row["prediction"], "key": row["key"],
            "correct": row["correct"]}


def live_prompt(subject: str, number: int) -> dict:
    """The prompt anatomy's text as the live site's server draws it (the widget's view on the dataset,
    as the widget JSON route runs it), for the export's worker to agree with."""
    data = MMLUData(mmlu_data_dir())
    context = {"subjects": {name: {"title": s.title, "test": s.sizes["test"]} for name, s in data.subjects.items()},
               "dataset": data}
    view = run_view(prompt_anatomy.WIDGET, {"subject": subject, "q": str(number)}, context)
    return {"subject": subject, "q": number, "key": view["prompt"]["key"],
            "text": "".join(part["text"] for part in view["prompt"]["parts"])}


@pytest.mark.browser
def test_the_export_read_in_chromium(site):
    """static-export.mjs under Node's test runner (as test_browser.py runs the *.test.mjs files, which
    get the live server instead), with Chromium's processes reaped with it."""
    root, _ = site
    assert (root / "lms" / "scorm12.min.js").exists(), f"no scorm-again in {SCORM_AGAIN} (npm ci: a devDependency)"
    with http_server(root) as origin:
        result = subprocess.run(
            [sys.executable, str(REPO_ROOT / "tools" / "reaped.py"), "node", "--test", "--test-reporter=spec",
             str(REPO_ROOT / "tests" / "browser" / "static-export.mjs")],
            cwd=REPO_ROOT, capture_output=True, text=True, env=dict(
                os.environ, EXPORT_URL=origin + SUB_PATH, EXPORT_DIR=str(root / SUB_PATH.strip("/")),
                LMS_URL=f"{origin}/lms/", SCORM_LAUNCH=f"scorm/embed/{PACKAGED[0]}/{PACKAGED[1]}.html",
                PUBLISHED=json.dumps(published_answer("astronomy", 7, "smollm2-135m-instruct-0shot")),
                PUBLISHED_PRO=json.dumps(published_answer("computer science", 42, "smollm2-0shot-first100", "mmlu_pro")),
                PROMPT=json.dumps(live_prompt("astronomy", 30))),
            timeout=400)
    print(result.stdout[-20000:])
    assert result.returncode == 0, f"{result.stdout[-8000:]}\n{result.stderr[-3000:]}"
