"""Slow-client attack: N connections that send a request head one line per second, for S seconds,
while one reader fetches /mmlu/ one request after another; printed: the reader's p50/p99 and failures.

    python3 bench/slow_clients.py [--connections 200] [--seconds 60] [--no-proxy]

Runs twice by default, against waitress alone and through deploy/'s nginx (Debian's package),
both started here on 127.0.0.1; the attackers connect from 127.0.0.2, the reader from 127.0.0.1.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from common import hardware, running_server

from deploy.local import NGINX, SlowClients, nginx_in_front, p99, reader_latencies


def attack(port: int, connections: int, seconds: float) -> str:
    with SlowClients(port, connections) as slow:
        opened = len(slow.sockets)
        latencies = reader_latencies(port, seconds)
        left = len(slow.sockets)
    failed = sum(1 for latency in latencies if latency == float("inf"))
    answered = [latency for latency in latencies if latency != float("inf")]
    p50 = statistics.median(answered) * 1000 if answered else float("nan")
    return (f"{opened} slow connections opened, {left} still open at the end; reader: {len(latencies)} requests, "
            f"{failed} failed, p50 {p50:.1f} ms, p99 {p99(latencies) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--no-proxy", action="store_true", help="only waitress alone")
    args = parser.parse_args()
    print(f"hardware: {hardware()}")
    with running_server(threads=12, env={"TRUSTED_PROXIES": "1"}) as server:
        port = int(server.url.rsplit(":", 1)[1])
        print(f"waitress alone: {attack(port, args.connections, args.seconds)}", flush=True)
        if not args.no_proxy and Path(NGINX).exists():
            with tempfile.TemporaryDirectory() as folder, nginx_in_front(port, Path(folder)) as proxy:
                print(f"through nginx:  {attack(proxy, args.connections, args.seconds)}", flush=True)


if __name__ == "__main__":
    main()
