"""Slow clients and floods, against waitress alone and through deploy/'s nginx (issue 11, item 1).

The attackers connect from 127.0.0.2 and 127.0.0.3 (all of 127/8 is loopback on Linux), the
normal reader from 127.0.0.1, so nginx's per-address limits tell them apart as they would tell
apart clients on the internet. The 60-second, 200-connection version is bench/slow_clients.py.
"""
from __future__ import annotations

import http.client
import re
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deploy.local import NGINX, SlowClients, nginx_in_front, reader_latencies
from tools.launcher import running_server

pytestmark = pytest.mark.slow
needs_nginx = pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed (tests/run.sh installs it)")


@pytest.fixture(scope="module")
def app_server():
    with running_server(threads=12, env={"TRUSTED_PROXIES": "1"}) as server:
        yield int(server.url.rsplit(":", 1)[1])


@pytest.fixture()
def proxy(app_server, tmp_path):
    with nginx_in_front(app_server, tmp_path) as port:
        yield port


# A site taken down answers no one (each reader's request times out at 5 s: inf); what the attacks
# leave of a reader's speed, over 60 s, is bench/slow_clients.py's figure (p99). Here a reader must
# get every answer, the typical one in well under a second: on a loaded 2-core machine one request,
# made while the server was still taking in the attack's connections, once took 1.02 s.
def test_waitress_alone_outlasts_150_slow_connections(app_server):
    """waitress's default limit was 100 connections: 101 slow ones took the site down."""
    with SlowClients(app_server, 150):
        # A site taken down times out the first request already; four seconds are a few dozen readings
        # across four of the attack's lines.
        latencies = reader_latencies(app_server, 4)
    assert all(latency < float("inf") for latency in latencies), latencies
    assert statistics.median(latencies) < 0.5, latencies


@needs_nginx
def test_through_nginx_200_slow_connections_leave_readers_fast(proxy):
    with SlowClients(proxy, 200) as attack:
        opened = len(attack.sockets)
        # Read until nginx has dropped some of the attack's heads (client_header_timeout, 10 s after each
        # connected; the attack learns of it at its next line, a second or two later), at most 15 s.
        latencies = reader_latencies(proxy, 15, until=lambda: len(attack.sockets) < opened)
        still_open = len(attack.sockets)
    assert all(latency < float("inf") for latency in latencies), latencies
    assert statistics.median(latencies) < 0.5, latencies
    assert still_open < opened  # nginx drops heads that take longer than client_header_timeout (10 s)


@needs_nginx
def test_nginx_refuses_big_bodies_before_the_app_with_json(proxy):
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
    connection.request("POST", "/api/score", body=b"{" + b" " * 100_000 + b"}", headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 413 and b'"status": 413' in response.read()
    assert "Content-Security-Policy" in response.headers


@needs_nginx
def test_nginx_serves_static_files_and_pyodide_itself(proxy):
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
    connection.request("GET", "/static/css/site.css?v=abc")
    response = connection.getresponse()
    response.read()
    assert response.status == 200 and response.headers["Server"] == "nginx"
    assert "immutable" in response.headers["Cache-Control"] and "Content-Security-Policy" in response.headers
    for path in ("/static/../app.py", "/static/css/../../app.py", "/static/no-such.css"):
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status in (400, 404), path
        assert b"import" not in response.read()
    from engine.python_runtime import pyodide_version
    from tools.launcher import REPO_ROOT

    version = pyodide_version(REPO_ROOT / "node_modules" / "pyodide")
    if version:
        connection.request("GET", f"/pyodide/{version}/pyodide.asm.wasm")
        response = connection.getresponse()
        response.read()
        assert response.status == 200 and response.headers["Content-Type"] == "application/wasm"


@needs_nginx
def test_nginx_limits_the_request_rate_per_client(proxy):
    def get(_) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10, source_address=("127.0.0.3", 0))
        try:
            connection.request("GET", "/api/explainers/standard_error?p=0.25&n=100")
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    first = get(0)
    # nginx allows 30 a second after a burst of 60: one client at a time would need over 60 answers a
    # second to go past it, which a loaded 2-core machine may not give; eight at once go past at once.
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(get, range(200)))
    assert first == 200 and 429 in statuses and set(statuses) <= {200, 429}
    assert reader_latencies(proxy, 1, "/api/explainers/standard_error?p=0.25&n=100")[0] < 1.0  # others unaffected


# -- issue 26, item 4: every route that starts the model sits in nginx's scoring zone --------------
def _scoring_location() -> re.Pattern:
    """The regular expression of the rendered site file's location that uses the scoring zone."""
    from deploy.render import render

    text = render("127.0.0.1:8000", "80")
    for match in re.finditer(r"location ~ (\S+) \{(.*?)\n    \}", text, re.S):
        if "zone=annotated_scoring" in match.group(2):
            return re.compile(match.group(1))
    raise AssertionError("no location uses the scoring zone")


def _post_routes() -> list[str]:
    """Every POST route of the app, its variable parts filled in (the live widgets' among them)."""
    from engine import create_app

    app = create_app({"TESTING": True})
    fill = {"slug": "scoring-lesson", "name": "three-scorers", "fn_name": "standard_error"}
    paths = {re.sub(r"<(?:[^:<>]+:)?(\w+)>", lambda m: fill[m.group(1)], rule.rule)
             for rule in app.url_map.iter_rules() if "POST" in rule.methods}
    return sorted(paths)


MODEL_ROUTES = ["/api/score", "/api/model/load", "/mmlu/run", "/api/mmlu-pro/score", "/api/mmlu-pro/generate",
                "/mmlu-pro/run", "/scoring-lesson/widgets/three-scorers", "/embed/scoring-lesson/three-scorers",
                "/scoring-lesson/three-scorers", "/scoring-lesson/overlap", "/mmlu/widgets/live-scoring",
                "/embed/mmlu/live-scoring"]


@pytest.mark.parametrize("path", MODEL_ROUTES)
def test_the_rendered_config_puts_each_model_route_in_the_scoring_zone(path):
    assert _scoring_location().fullmatch(path), path


def test_every_post_route_but_the_math_api_is_in_the_scoring_zone():
    location = _scoring_location()
    for path in _post_routes():
        if path.startswith("/api/explainers/"):  # the math API: bounded work, the page limit (widgets call it)
            assert not location.fullmatch(path), path
        else:
            assert location.fullmatch(path), f"{path} takes posts but is not in nginx's scoring zone"
    for path in ("/", "/mmlu/", "/static/css/site.css", "/api/questions", "/api/widgets/mmlu/chance-explorer",
                 "/api/explainers/ngram_overlap", "/mmlu/assets/x.js"):
        assert not location.fullmatch(path), path


@needs_nginx
def test_nginx_answers_429_to_a_flood_of_model_posts(proxy):
    """Fifteen quick posts to each model route from one address: the burst (10) passes to the app,
    the rest are nginx's JSON 429; another address is not affected."""
    for number, path in enumerate(["/api/mmlu-pro/score", "/scoring-lesson/widgets/three-scorers",
                                   "/scoring-lesson/overlap"]):
        statuses = []
        for _ in range(15):
            connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10,
                                                    source_address=(f"127.0.0.{10 + number}", 0))
            connection.request("POST", path, body=b"{}", headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
            statuses.append(response.status)
            connection.close()
        assert statuses[0] != 429 and statuses.count(429) >= 4, (path, statuses)
        assert b'"status": 429' in body and response.headers["Retry-After"]
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10, source_address=("127.0.0.20", 0))
    connection.request("POST", "/api/mmlu-pro/score", body=b"{}", headers={"Content-Type": "application/json"})
    assert connection.getresponse().status == 400


@needs_nginx
def test_through_nginx_the_origin_check_sees_the_port_the_browser_used(proxy):
    """nginx passes Host without the port (Debian's proxy_params: $host) and X-Forwarded-Port with it:
    a page of this site (same scheme, host and port) may post; one on another port of the host may not."""
    def post(origin: str) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10, source_address=("127.0.0.30", 0))
        connection.request("POST", "/api/mmlu-pro/score", body=b'{"category": "no such"}',
                           headers={"Content-Type": "application/json", "Origin": origin})
        response = connection.getresponse()
        response.read()
        return response.status

    assert post(f"http://127.0.0.1:{proxy}") == 400  # through the Origin check, refused for its category
    assert post("http://127.0.0.1:1") == 403
    assert post(f"https://127.0.0.1:{proxy}") == 403
