"""Run deploy/'s nginx in front of a local app or over local model servers, and the slow clients that attack it.

Used by tests/engine/test_proxy.py, tests/model/test_model_balancer.py and bench/slow_clients.py.
Attackers connect from another loopback address (127.0.0.2, …; all of 127/8 is loopback on Linux)
than the reader (127.0.0.1), so nginx's per-address limits tell them apart as they would tell
clients apart on the internet.
"""
from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from deploy.render import render, render_model_balancer
from tools.launcher import free_port

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class SlowClients:
    """``count`` connections from ``source`` that send a request head one line every ``every`` s."""

    def __init__(self, port: int, count: int, source: str = "127.0.0.2", every: float = 1.0):
        self.port, self.count, self.source, self.every = port, count, source, every
        self.sockets: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)

    def __enter__(self):
        for _ in range(self.count):
            sock = socket.socket()
            sock.bind((self.source, 0))
            sock.settimeout(5)
            try:
                sock.connect(("127.0.0.1", self.port))
                sock.sendall(b"GET /mmlu/ HTTP/1.1\r\nHost: localhost\r\n")
            except OSError:
                sock.close()
                continue
            self.sockets.append(sock)
        self.thread.start()
        return self

    def _drip(self):
        line = 0
        while not self.stop.wait(self.every):
            line += 1
            for sock in list(self.sockets):
                try:
                    sock.sendall(f"X-Slow-{line}: {'a' * 20}\r\n".encode())
                except OSError:  # the server dropped it: that is the defence working
                    self.sockets.remove(sock)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        for sock in self.sockets:
            sock.close()


def reader_latencies(port: int, seconds: float, path: str = "/mmlu/", until=None) -> list[float]:
    """A normal reader fetching ``path`` one request after another for ``seconds``, or until ``until()``
    is true after a request; each latency in seconds, or inf on failure."""
    latencies, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline and not (latencies and until and until()):
        started = time.perf_counter()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=("127.0.0.1", 0))
            connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
            response = connection.getresponse()
            response.read()
            connection.close()
            latencies.append(time.perf_counter() - started if response.status == 200 else float("inf"))
        except OSError:
            latencies.append(float("inf"))
        time.sleep(0.05)
    return latencies


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@contextmanager
def running_nginx(site: str, port: int, tmp_path: Path):
    """nginx with the rendered ``site`` (listening on 127.0.0.1:``port``), its files under ``tmp_path``."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "site.conf").write_text(site)
    user = "user root;" if os.geteuid() == 0 else ""
    (tmp_path / "nginx.conf").write_text(f"""
worker_processes 1;
{user}
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/logs/error.log;
events {{ worker_connections 4096; }}
http {{
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path {tmp_path}/body; proxy_temp_path {tmp_path}/proxy; fastcgi_temp_path {tmp_path}/f;
  uwsgi_temp_path {tmp_path}/u; scgi_temp_path {tmp_path}/s;
  include {tmp_path}/site.conf;
}}
""")
    process = subprocess.Popen([NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def nginx_in_front(app_port: int, tmp_path: Path):
    """deploy/'s public front over the app on ``app_port``; yields nginx's port."""
    port = free_port()
    return running_nginx(render(f"127.0.0.1:{app_port}", f"127.0.0.1:{port}"), port, tmp_path)


def model_balancer(server_ports: list[int], tmp_path: Path):
    """deploy/'s model balancer over the model servers on ``server_ports`` (loopback); yields nginx's port."""
    port = free_port()
    site = render_model_balancer([f"127.0.0.1:{p}" for p in server_ports], f"127.0.0.1:{port}")
    return running_nginx(site, port, tmp_path)
