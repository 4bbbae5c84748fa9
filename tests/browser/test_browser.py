"""Run each headless-Chromium test file (tests/browser/*.test.mjs) against the live server.

The browser tests are written for Node's test runner with playwright-core driving Debian's
/usr/bin/chromium; this wrapper gives each file the server's URL and reports its output.

Node writes two reports: the readable spec report to stdout (printed, and its tail kept in the
failure message) and a TAP report to tests/artifacts/browser/<file>.tap, from which a failure
message names the failing test cases, with their error messages and locations, first.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.processes import descendants, process_table

REPO_ROOT = Path(__file__).resolve().parents[2]
BROWSER_DIR = REPO_ROOT / "tests" / "browser"
REPORTS = REPO_ROOT / "tests" / "artifacts" / "browser"
FILES = sorted(BROWSER_DIR.glob("*.test.mjs"))
# These pages score questions with the real model. They run on one xdist worker, so that one live
# server loads the model (torch and the weights: several CPU-seconds) instead of each worker's.
NEEDS_MODEL = {"live-scoring.test.mjs", "mmlu-pro-live.test.mjs", "scoring-lesson-scorers.test.mjs"}
ON_THE_MODEL = [pytest.mark.model, pytest.mark.xdist_group("live-server-model")]


@dataclass
class Failure:
    name: str  # "suite > test" for nested tests
    error: str = ""
    location: str = ""  # where the test is defined
    failed_at: str = ""  # the first stack frame in a test file: usually the failing assertion


_TEST_LINE = re.compile(r"^(?P<indent> *)(?P<ok>ok|not ok) \d+ - (?P<name>.*?)(?: # (?:SKIP|TODO)\b.*)?$")
_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: (?P<name>.*)$")
_KEY = re.compile(r"^(?P<key>[A-Za-z_]+): ?(?P<value>.*)$")


def _unescape(name: str) -> str:
    return name.replace("\\#", "#").replace("\\\\", "\\")


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def _diagnostics(lines: list[str], start: int, indent: int) -> tuple[dict[str, str], int]:
    """Read the YAML block (`---` ... `...`) after a test line; return its keys and the next line index."""
    pad = " " * (indent + 2)
    if start >= len(lines) or lines[start] != pad + "---":
        return {}, start
    fields: dict[str, str] = {}
    i = start + 1
    while i < len(lines) and lines[i] != pad + "...":
        line = lines[i][len(pad):] if lines[i].startswith(pad) else lines[i].lstrip()
        i += 1
        match = _KEY.match(line)
        if not match:
            continue
        key, value = match["key"], match["value"]
        if value in ("|-", "|", ">-", ">"):  # block scalar: the more-indented lines that follow
            block = []
            while i < len(lines) and (lines[i].startswith(pad + "  ") or not lines[i].strip()):
                block.append(lines[i][len(pad) + 2:])
                i += 1
            fields[key] = "\n".join(block).strip("\n")
        else:
            fields[key] = _scalar(value)
    return fields, i + 1


def _first_test_frame(stack: str) -> str:
    for frame in stack.splitlines():
        if match := re.search(r"\(?(?:file://)?(/[^()\s]+\.test\.mjs:\d+:\d+)\)?", frame):
            return match[1]
    return ""


def failing_cases(tap: str) -> list[Failure]:
    """The failing test cases of a Node TAP report, innermost tests only (not the suites they fail)."""
    lines = tap.splitlines()
    failures: list[Failure] = []
    parents: list[tuple[int, str]] = []  # (indent, name) of the enclosing subtests
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if match := _SUBTEST.match(line):
            indent = len(match["indent"])
            parents = [p for p in parents if p[0] < indent] + [(indent, _unescape(match["name"]))]
            continue
        match = _TEST_LINE.match(line)
        if not match:
            continue
        indent = len(match["indent"])
        fields, i = _diagnostics(lines, i, indent)
        parents = [p for p in parents if p[0] < indent]
        if match["ok"] == "not ok" and fields.get("failureType") != "subtestsFailed":
            path = [name for _, name in parents] + [_unescape(match["name"])]
            failures.append(Failure(" > ".join(path), fields.get("error", ""), fields.get("location", ""),
                                    _first_test_frame(fields.get("stack", ""))))
    return failures


def describe(failures: list[Failure]) -> str:
    parts = []
    for failure in failures:
        location = failure.location.removeprefix(f"{REPO_ROOT}{os.sep}")
        where = f" ({location})" if location else ""
        if failure.failed_at and failure.failed_at != failure.location:
            where += f", failed at {failure.failed_at.removeprefix(f'{REPO_ROOT}{os.sep}')}"
        error = "\n".join("      " + line for line in failure.error.splitlines()[:25])
        parts.append(f"  ✗ {failure.name}{where}\n{error}")
    return "\n".join(parts)


@pytest.mark.browser
@pytest.mark.parametrize("test_file", [
    pytest.param(f, id=f.name, marks=ON_THE_MODEL if f.name in NEEDS_MODEL else []) for f in FILES
])
def test_in_chromium(live_server, test_file):
    REPORTS.mkdir(parents=True, exist_ok=True)
    tap_path = REPORTS / (test_file.name.removesuffix(".test.mjs") + ".tap")
    result = run_node_tests(test_file, tap_path, dict(os.environ, BASE_URL=live_server))
    print(result.stdout[-20000:])
    print(result.stderr[-5000:])
    if result.returncode != 0:
        pytest.fail(failure_message(test_file, tap_path, result), pytrace=False)


def run_node_tests(test_file: Path, tap_path: Path, env: dict[str, str],
                   timeout: float = 600) -> subprocess.CompletedProcess:
    """`node --test` with the spec report on stdout and a TAP report in `tap_path`, under
    tools/reaped.py: Chromium's processes end with the file, and their CPU time counts as ours.
    A file still running after `timeout` seconds is stopped with everything it started (its own
    process group: killing the wrapper alone would leave node holding the output pipe open), and
    the result says so after what it had printed."""
    tap_path.unlink(missing_ok=True)
    command = [sys.executable, str(REPO_ROOT / "tools" / "reaped.py"), "node", "--test",
               "--test-reporter=spec", "--test-reporter-destination=stdout",
               "--test-reporter=tap", f"--test-reporter-destination={tap_path}", str(test_file)]
    with subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            stderr += f"\nstopped: {test_file.name} ran past {timeout:g} s"
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def failure_message(test_file: Path, tap_path: Path, result: subprocess.CompletedProcess) -> str:
    """The failing cases first (from the TAP report), then the tail of the spec report."""
    failures = failing_cases(tap_path.read_text(errors="replace")) if tap_path.exists() else []
    if failures:  # the first line is what pytest's short summary shows
        names = "; ".join(f.name for f in failures)
        summary = f"{test_file.name}: {len(failures)} failing test case(s): {names}\n{describe(failures)}"
    else:
        summary = f"{test_file.name} failed (node exited {result.returncode}) with no failing test case in {tap_path}"
    return f"{summary}\n\n--- spec report (tail) ---\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


SELF_TEST = """
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
test('passes', () => {});
test('a plain # failure', () => { assert.equal(1 + 1, 3, 'one and one make three'); });
describe('a suite', () => {
  test('inner failure', async () => { throw new Error('first line\\nsecond line'); });
  test('inner pass', () => {});
});
test('a parent', async (t) => { await t.test('its failing child', () => { assert.ok(false); }); });
"""


def test_a_failing_node_test_file_is_reported_by_its_failing_cases(tmp_path):
    """The reporting above, on a small node:test file: only the failing cases are named, innermost first."""
    test_file = tmp_path / "sample.test.mjs"
    test_file.write_text(SELF_TEST)
    tap_path = tmp_path / "sample.tap"
    result = run_node_tests(test_file, tap_path, dict(os.environ))
    assert result.returncode != 0
    failures = failing_cases(tap_path.read_text())
    assert [f.name for f in failures] == ["a plain # failure", "a suite > inner failure", "a parent > its failing child"]
    assert failures[0].error.startswith("one and one make three") and "2 !== 3" in failures[0].error
    assert failures[1].error == "first line\nsecond line"
    assert all(f.location.startswith(str(test_file)) for f in failures)
    message = failure_message(test_file, tap_path, result)
    assert message.startswith("sample.test.mjs: 3 failing test case(s): a plain # failure; a suite > inner failure; "
                              "a parent > its failing child\n  ✗ a plain # failure (")
    assert failures[0].failed_at == f"{test_file}:5:42"  # the assert.equal line, not the test's first line


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads Linux's /proc")
def test_a_node_test_file_that_hangs_is_stopped_with_what_it_said(tmp_path):
    """A file past its time is stopped with the processes it started, at once, and its report so far
    is kept: pytest is not left waiting on a node that still holds the output pipe."""
    test_file = tmp_path / "hangs.test.mjs"
    test_file.write_text("import { test } from 'node:test';\n"
                         "test('finishes', () => {});\n"
                         "test('hangs', () => new Promise((resolve) => setTimeout(resolve, 120_000)));\n")
    started = time.monotonic()
    result = run_node_tests(test_file, tmp_path / "hangs.tap", dict(os.environ), timeout=4)
    assert time.monotonic() - started < 60  # not the two minutes the file would take
    assert result.returncode != 0 and result.stderr.endswith("stopped: hangs.test.mjs ran past 4 s")
    assert "finishes" in result.stdout

    def running_it() -> list[str]:
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if str(test_file).encode() in cmdline.read_bytes():
                    found.append(cmdline.parent.name)
            except OSError:  # ended while we looked
                continue
        return found

    # node runs the file in a child of its own, killed with it but perhaps not yet gone: it may take
    # a moment to go, never the two minutes it would run.
    deadline = time.monotonic() + 15
    while running_it() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running_it(), f"still running: {running_it()}"


def test_a_process_left_behind_is_waited_for_and_its_cpu_time_counted():
    """tools/reaped.py, as the browser files run under it: the command exits (status 3) while a
    process it started still works, as Chromium's renderers outlive the browser; the wrapper waits
    for it, so its CPU time reaches our children's time, and nothing is left running."""
    burn = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass\n" \
           "open(__import__('sys').argv[1], 'w').write('done')"
    done = REPORTS.parent / f"reaped-{os.getpid()}.txt"
    done.parent.mkdir(parents=True, exist_ok=True)
    done.unlink(missing_ok=True)
    before = os.times()
    result = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "reaped.py"), "sh", "-c",
                             f'"{sys.executable}" -c "$0" "$1" & exit 3', burn, str(done)], timeout=60)
    after = os.times()
    assert result.returncode == 3
    assert done.read_text() == "done"  # it ran to its end: waited for, not killed
    assert (after.children_user + after.children_system) - (before.children_user + before.children_system) >= 0.45
    done.unlink()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads Linux's /proc")
def test_the_process_table_finds_a_childs_child_and_its_cpu_time():
    """tools/processes.py, which the test timeline and tools/reaped.py read."""
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\ntime.sleep(30)"
    # A shell that starts Python: our child's child.
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0"; :', burn])
    try:
        for _ in range(200):
            table = process_table()
            grandchildren = [pid for pid in descendants(os.getpid(), table) if table[pid][0] == shell.pid]
            if grandchildren and table[grandchildren[0]][1] >= 0.29:
                break
            time.sleep(0.05)
        assert table[os.getpid()][0] == os.getppid()
        assert shell.pid in descendants(os.getpid(), table)
        assert grandchildren and table[grandchildren[0]][1] >= 0.29  # the CPU it burnt, in seconds
        assert os.getpid() not in descendants(os.getpid(), table)
    finally:
        for pid in descendants(shell.pid, process_table()):  # before the shell: then they are still its
            os.kill(pid, 9)
        shell.kill()
        shell.wait()
