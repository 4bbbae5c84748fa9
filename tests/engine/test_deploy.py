"""deploy/render.py: the model balancer and the systemd units, rendered and checked by their own tools.

nginx's `-t` reads the rendered balancer as nginx would load it; `systemd-analyze verify` reads the
rendered units as systemd would (it warns on an unknown key or a bad value, and fails on a missing
program). tests/model/test_model_balancer.py runs the balancer over two model servers.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.local import NGINX
from deploy.render import main, render_model_balancer, render_model_unit, render_web_unit


def model_location(text: str) -> tuple[re.Pattern, str]:
    """The balancer's location that passes requests to the model servers: its pattern and its body."""
    for match in re.finditer(r"\n    location ~ (\S+) \{(.*?)\n    \}", text, re.S):
        if "proxy_pass http://annotated_model;" in match.group(2):
            return re.compile(match.group(1)), match.group(2)
    raise AssertionError("no location passes to the model servers")


def test_the_balancer_hashes_on_the_prefix_key_over_every_server():
    text = render_model_balancer(["10.0.0.2:8001", "10.0.0.3:8001", "[fd00::4]:8002"], "127.0.0.1:8100")
    upstream = re.search(r"upstream annotated_model \{(.*?)\n\}", text, re.S).group(1)
    assert re.findall(r"^\s*server (\S+) max_fails=1 fail_timeout=10s;", upstream, re.M) == \
        ["10.0.0.2:8001", "10.0.0.3:8001", "[fd00::4]:8002"]
    assert "hash $annotated_model_key consistent;" in upstream
    assert upstream.index("hash ") < upstream.index("keepalive ")  # nginx refuses the other order
    assert re.search(r"map \$http_x_prefix_key \$annotated_model_key \{\s*\"\"\s+\$request_id;", text)
    assert "listen 127.0.0.1:8100;" in text and "@" not in upstream


def test_the_balancer_resends_posts_streams_unbuffered_and_takes_the_model_servers_bodies():
    from livescoring.server import MAX_BODY_BYTES, REQUEST_TIMEOUT_S

    text = render_model_balancer(["127.0.0.1:8001"])
    _, route = model_location(text)
    assert "proxy_next_upstream error timeout http_502 http_503 non_idempotent;" in route
    assert "proxy_buffering off;" in route and "proxy_request_buffering on;" in text
    assert f"client_max_body_size {MAX_BODY_BYTES // 2**20}m;" in text and f'"{MAX_BODY_BYTES} bytes' not in text
    assert f"over {MAX_BODY_BYTES} bytes" in text  # nginx's own 413 names the same limit
    read_timeout = int(re.search(r"proxy_read_timeout (\d+)s;", route).group(1))
    assert read_timeout > REQUEST_TIMEOUT_S  # the model server's own 504 comes first
    assert "proxy_set_header Authorization" not in text  # the client's key passes through as sent


def test_the_balancer_passes_exactly_the_model_servers_routes():
    """vLLM answers /pause and other control routes without its API key; the balancer passes only
    the routes the model server has (checked against its route table) and answers a JSON 404 to the rest."""
    from livescoring.server import ModelServer

    pattern, _ = model_location(render_model_balancer(["127.0.0.1:8001"]))
    for _, path in ModelServer(None, "smollm2").routes:
        assert pattern.fullmatch(path), f"the model server's {path} is not passed by the balancer"
    for path in ("/", "/pause", "/scale_elastic_ep", "/v1/completions/x", "/collective_rpc", "/v1/models/../pause",
                 "/tokenizerXjson"):
        assert not pattern.fullmatch(path), path


@pytest.mark.parametrize("servers, message", [
    ([], "at least one model server"),
    (["10.0.0.2"], "not HOST:PORT"),
    (["10.0.0.2:0"], "not HOST:PORT"),
    (["10.0.0.2:70000"], "not HOST:PORT"),
    (["10.0.0.2:8001; include /etc/passwd"], "not HOST:PORT"),
    (["fd00::2:8001"], "not HOST:PORT"),  # an IPv6 host needs its brackets
    (["10.0.0.2:8001", "10.0.0.2:8001"], "named twice"),
])
def test_bad_server_lists_are_refused_naming_what_to_fix(servers, message):
    with pytest.raises(ValueError, match=message):
        render_model_balancer(servers)


def test_the_command_line_refuses_a_bad_address_with_exit_status_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["model-balancer", "--model-server", "10.0.0.2:8001", "nonsense"])
    assert exit_.value.code == 2 and "'nonsense' is not HOST:PORT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["web-unit", "--model-server-url", "10.0.0.2:8100"])
    assert "not an http:// or https:// URL" in capsys.readouterr().err


@pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed (tests/run.sh installs it)")
def test_nginx_accepts_the_rendered_balancer(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "site.conf").write_text(render_model_balancer(["127.0.0.1:8001", "[::1]:8002"], "127.0.0.1:8100"))
    (tmp_path / "nginx.conf").write_text(f"""
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/logs/error.log;
events {{ worker_connections 64; }}
http {{ access_log off; include {tmp_path}/site.conf; }}
""")
    result = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "test is successful" in result.stderr, result.stderr


def test_the_units_run_the_web_tier_and_one_model_server_per_port():
    web = render_web_unit("127.0.0.1:8000", "http://10.0.0.9:8100", "papers", "/usr/bin/python3")
    assert "ExecStart=/usr/bin/python3 app.py --host 127.0.0.1 --port 8000" in web
    assert "Environment=MODEL_SERVER_URL=http://10.0.0.9:8100" in web and "User=papers" in web
    model = render_model_unit("10.0.0.2", "papers", "/usr/bin/python3")
    assert "ExecStart=/usr/bin/python3 -m livescoring serve --host 10.0.0.2 --port %i" in model
    for unit in (web, model):
        assert "Restart=on-failure" in unit and "TimeoutStopSec=40s" in unit
        assert "EnvironmentFile=/etc/annotated-papers/model-server.env" in unit
        assert not re.search(r"@[A-Z_]+@", unit), "a name left unfilled"


def test_the_stop_timeout_outlasts_the_graceful_shutdowns():
    from engine.config import default_config
    from livescoring.server import SHUTDOWN_GRACE_S

    grace = max(SHUTDOWN_GRACE_S, default_config()["SERVER_SHUTDOWN_GRACE_S"])
    for unit in (render_web_unit(), render_model_unit()):
        stop = int(re.search(r"TimeoutStopSec=(\d+)s", unit).group(1))
        assert stop >= grace + 5  # the grace, then the threads' 2 s and the exit


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed (Debian's systemd)")
def test_systemd_accepts_the_rendered_units(tmp_path):
    (tmp_path / "annotated-papers-web.service").write_text(render_web_unit(python=sys.executable))
    # verify wants an instance of a template unit: the port 8001
    (tmp_path / "annotated-papers-model@8001.service").write_text(render_model_unit(python=sys.executable))
    result = subprocess.run(["systemd-analyze", "verify", "annotated-papers-web.service", "annotated-papers-model@8001.service"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    # Warnings (an unknown key, a bad value) exit 0 too: any output is a finding.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr
