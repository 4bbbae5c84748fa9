"""The one run-file schema, reader and writer (benchmarks/runfile.py, benchmarks/server/runfile.py),
without the model: a killed writer leaves only whole files of whole lines, resume keeps what was
written and skips its questions, ``.gz`` is gzip, and every published run reads through the schema.
"""
from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks.mmlu.server.published_runs import RUNS_DIR as MMLU_RUNS
from benchmarks.mmlu_pro.server import LIVE_RUN
from benchmarks.mmlu_pro.server import RUNS_DIR as MMLU_PRO_RUNS
from benchmarks.runfile import question_key
from benchmarks.server.runfile import RunWriter, first_row, read_lines, read_rows
from benchmarks.server.summary import summarise

ROOT = Path(__file__).resolve().parents[2]


def row(i: int, group: str = "astronomy", method: str = "letter") -> dict:
    return {"subject": group, "split": "test", "index": i, "method": method, "shots": 0,
            "probabilities": {"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25}, "prediction": "A", "key": "A",
            "correct": True, "confidence": 0.25, "vocabulary_share": 0.5, "model": "m", "padding": "x" * 2000}


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from benchmarks.server.runfile import RunWriter
    writer = RunWriter(Path(sys.argv[1]), ("letter", "test"), resume=True, save_every=0)
    print("ready", flush=True)
    i = len(writer.rows)
    while True:  # every add saves the whole file: a kill lands in the middle of a save sooner or later
        writer.add([{"subject": "astronomy", "split": "test", "index": i, "method": "letter", "key": "A",
                     "prediction": "A", "correct": True, "padding": "x" * 5000}])
        i += 1
""")


@pytest.mark.slow  # three writer processes killed after waits
@pytest.mark.parametrize("name", ["run.jsonl", "run.jsonl.gz"])
def test_a_writer_killed_mid_write_leaves_only_whole_lines_and_resume_goes_on(tmp_path, name):
    out = tmp_path / name
    counts = []
    for delay in (0.3, 0.45, 0.6):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(out), str(ROOT)], stdout=subprocess.PIPE)
        assert writer.stdout.readline() == b"ready\n"
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        raw = gzip.decompress(out.read_bytes()) if name.endswith(".gz") else out.read_bytes()
        assert raw.endswith(b"\n")  # no torn line: the file is one whole save
        rows = [json.loads(line) for line in raw.decode().splitlines()]
        assert [r["index"] for r in rows] == list(range(len(rows)))  # resumed where the last save ended
        counts.append(len(rows))
    assert counts == sorted(counts) and counts[-1] > counts[0] > 0
    RunWriter(out, ("letter", "test"), resume=True)  # opening again removes a killed save's temporary file
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_resume_keeps_the_lines_skips_their_questions_and_refuses_other_settings(tmp_path):
    out = tmp_path / "run.jsonl"
    with RunWriter(out, ("letter", "test")) as writer:
        writer.add([row(0), row(1)])
    before = out.read_bytes()
    with open(out, "ab") as fh:
        fh.write(b'{"subject": "astronomy", "spl')  # a torn line, as an old append-only writer could leave
    writer = RunWriter(out, ("letter", "test"), resume=True)
    assert writer.done() == {("astronomy", "test", 0), ("astronomy", "test", 1)}
    writer.add([row(2)])
    writer.close()
    assert out.read_bytes() == before + (json.dumps(row(2)) + "\n").encode()
    with pytest.raises(ValueError, match="another run"):
        RunWriter(out, ("option", "test"), resume=True)
    RunWriter(out, ("option", "test")).close()  # without resume (--force): a new, empty run
    assert out.read_bytes() == b""


def test_gzip_files_round_trip_through_the_reader(tmp_path):
    out = tmp_path / "run.jsonl.gz"
    with RunWriter(out) as writer:
        writer.add([row(0), row(1, "virology")])
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert read_rows(out) == [row(0), row(1, "virology")]


def test_the_first_row_is_read_alone_as_the_reader_reads_it(tmp_path):
    """A run's settings from its first whole line (blank lines skipped), plain or gzip; None for no row."""
    plain, zipped, torn = tmp_path / "run.jsonl", tmp_path / "run.jsonl.gz", tmp_path / "torn.jsonl"
    lines = "\n" + json.dumps(row(0)) + "\n" + json.dumps(row(1)) + "\n"
    plain.write_text(lines, encoding="utf-8")
    zipped.write_bytes(gzip.compress(lines.encode()))
    torn.write_text(json.dumps(row(0))[:-3], encoding="utf-8")  # a killed writer's only line, unfinished
    assert first_row(plain) == first_row(zipped) == read_rows(plain)[0] == row(0)
    assert first_row(torn) is None and read_rows(torn) == []


def test_every_published_mmlu_run_reads_through_the_schema_unchanged():
    for path in sorted(MMLU_RUNS.glob("*.jsonl.gz")):
        lines = read_lines(path)
        assert len(lines) == 14042 and read_rows(path) == [json.loads(line) for line in lines]


def test_the_published_mmlu_pro_run_reads_through_the_schema_with_its_numbers():
    path = MMLU_PRO_RUNS / LIVE_RUN
    rows = read_rows(path)
    assert {(r["split"], r["method"]) for r in rows} == {("test", "letter")}  # written before the schema had them
    assert len({question_key(r) for r in rows}) == 1400
    summary = summarise(rows, "categories")  # runs/README.md, "What it printed"
    assert summary["questions"] == 1400 and round(100 * summary["micro"]["accuracy"], 1) == 12.9
    assert [round(100 * x, 1) for x in summary["micro"]["ci95"]] == [11.3, 14.8]
    assert round(100 * summary["chance"], 1) == 11.3
    shares = {name: c["accuracy"] for name, c in summary["categories"].items()}
    assert min(shares.values()) == shares["math"] == shares["psychology"] == 0.08
    assert max(shares.values()) == shares["computer science"] == 0.19
