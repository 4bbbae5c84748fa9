"""Slow clients and floods, against waitress alone and through deploy/'s nginx (issue 11, item 1).

The attackers connect from 127.0.0.2 and 127.0.0.3 (all of 127/8 is loopback on Linux), the
normal reader from 127.0.0.1, so nginx's per-address limits tell them apart as they would tell
apart clients on the internet. The 60-second, 200-connection version is bench/slow_clients.py.
"""
from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from deploy.local import NGINX, SlowClients, nginx_in_front, p99, reader_latencies
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


def test_waitress_alone_outlasts_150_slow_connections(app_server):
    """waitress's default limit was 100 connections: 101 slow ones took the site down."""
    with SlowClients(app_server, 150):
        latencies = reader_latencies(app_server, 8)
    assert all(latency < float("inf") for latency in latencies), latencies
    assert p99(latencies) < 1.0


@needs_nginx
def test_through_nginx_200_slow_connections_leave_readers_fast(proxy):
    with SlowClients(proxy, 200) as attack:
        latencies = reader_latencies(proxy, 15)
        still_open = len(attack.sockets)
    assert all(latency < float("inf") for latency in latencies), latencies
    assert p99(latencies) < 1.0, f"p99 {p99(latencies):.3f} s"
    assert still_open < 200  # nginx drops heads that take longer than client_header_timeout (10 s)


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
    from engine.pyodide_assets import pyodide_version
    from tools.launcher import REPO_ROOT

    version = pyodide_version(REPO_ROOT / "node_modules" / "pyodide")
    if version:
        connection.request("GET", f"/pyodide/{version}/pyodide.asm.wasm")
        response = connection.getresponse()
        response.read()
        assert response.status == 200 and response.headers["Content-Type"] == "application/wasm"


@needs_nginx
def test_nginx_limits_the_request_rate_per_client(proxy):
    statuses = []
    for _ in range(120):
        connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10, source_address=("127.0.0.3", 0))
        connection.request("GET", "/api/explainers/standard_error?p=0.25&n=100")
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
        connection.close()
    assert 429 in statuses and statuses[0] == 200
    assert reader_latencies(proxy, 1, "/api/explainers/standard_error?p=0.25&n=100")[0] < 1.0  # others unaffected
