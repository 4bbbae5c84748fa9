"""Issue 41 item 4: the gate command's last holes, each attack as the report wrote it.

A line with a 5,000-digit integer, a subject name 100 KB long beside a thousand others, a subject
name that retitles and clears the terminal, a gzip of line breaks that are not "\\n". Each test
failed on the code before the fix (an AttributeError and exit 1; 100 MB of output; the escapes
printed raw; 245 million blank lines read). The gate runs in this process here (cheap);
tests/engine/test_hostile_web.py runs it in a child where its memory is measured.
"""
from __future__ import annotations

import gzip
import json
import re

import pytest
from documents.scoring_lesson.widgets.two_run_gate import WIDGET

from benchmarks.runs import LINE_BREAKS, MAX_FILE_LINES, RunFormatError
from benchmarks.server import gate_command
from engine.__main__ import main as engine_main
from tools.launcher import REPO_ROOT
from widgetkit import run_view

GATE_RUN = REPO_ROOT / "benchmarks/mmlu/runs/smollm2-135m-instruct-0shot.jsonl.gz"
HARNESS_NAME = "samples_mmlu_anatomy_2024-06-01T10-00-00.jsonl"
HUGE_INTEGER_LINE = '{"doc_id": ' + "9" * 5000 + ', "acc": 1}'
TERMINAL_ESCAPES = "\x1b]0;title\x07\x1b[2J"  # retitles the terminal window, then clears the screen
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # anything a terminal acts on but "\n"


def gate(capsys, production, candidate=GATE_RUN, *flags: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``python -m engine scoring-lesson gate`` on the two files."""
    status = engine_main(["scoring-lesson", "gate", "--no-groups", *flags, "--production", str(production),
                          "--candidate", str(candidate)])
    out, err = capsys.readouterr()
    return status, out, err


def evaluate_file(path, rows) -> str:
    """An evaluate run of (subject, index, correct) rows at ``path``; returns the path as text."""
    path.write_text("".join(json.dumps({"subject": s, "split": "test", "index": i, "correct": c}) + "\n"
                            for s, i, c in rows))
    return str(path)


def test_a_line_with_a_5000_digit_integer_is_exit_2_with_one_line_naming_it(tmp_path, capsys):
    path = tmp_path / HARNESS_NAME
    path.write_text(HUGE_INTEGER_LINE + "\n")
    status, out, err = gate(capsys, path, path)
    assert status == 2 and out == "" and err.count("\n") == 1, err[-2000:]
    assert f"{path} line 1: a number with thousands of digits" in err


def test_the_widget_names_the_5000_digit_line_too():
    runs = {role: [[HARNESS_NAME, HUGE_INTEGER_LINE]] for role in ("production", "candidate")}
    view = run_view(WIDGET, {}, {"runs": runs})
    assert f"{HARNESS_NAME} line 1: a number with thousands of digits" in view["error"] and view["rows"] == []


def test_an_error_the_gate_did_not_foresee_is_exit_2_on_one_printable_line(monkeypatch, capsys):
    def broken(*args):
        raise ZeroDivisionError("a bug\nin the gate " + TERMINAL_ESCAPES + "x" * 10_000)

    monkeypatch.setattr(gate_command, "compare", broken)
    status, out, err = gate(capsys, GATE_RUN)
    assert status == 2 and out == "" and err.count("\n") == 1 and not CONTROLS.search(err)
    assert "(ZeroDivisionError: a bug\\nin the gate \\x1b]0;title\\x07" in err and "Traceback" not in err
    assert len(err) <= gate_command.MAX_MESSAGE + len("error: \n")


def test_a_long_subject_name_among_a_thousand_subjects_gives_bounded_output(tmp_path, capsys):
    """Before, every row was padded to the longest name: 1,001 rows of 100 KB, 100 MB of stdout."""
    long_name = "a" * 100_000
    shared = [(f"subject {j:04d}", i, True) for j in range(1000) for i in range(2)]
    production = evaluate_file(tmp_path / "production.jsonl", [(long_name, 0, True), (long_name, 1, True), *shared])
    candidate = evaluate_file(tmp_path / "candidate.jsonl", [(long_name, 0, False), (long_name, 1, False), *shared])
    status, out, err = gate(capsys, production, candidate)
    assert status in gate_command.EXIT_STATUS.values(), err[-2000:]  # read: a verdict, not 2
    table = out.split("Per-subject deltas", 1)[1].splitlines()[1:]
    assert len(out) < 20_000 and len(table) == gate_command.MAX_ROWS + 1
    assert table[0].startswith("  " + "a" * (gate_command.NAME_WIDTH - 1) + "…  ")  # the smallest delta: cut
    assert "  … 901 subjects left out here (--json lists them all)" in table
    status, out, _ = gate(capsys, production, candidate, "--json")  # all of it, each name once
    assert len(json.loads(out)["subject_rows"]) == 1001 and out.count(long_name) == 1


def test_a_subject_name_with_terminal_escapes_is_printed_escaped(tmp_path, capsys):
    rows = [(name, i, True) for name in (TERMINAL_ESCAPES, "anatomy") for i in range(3)]
    production = evaluate_file(tmp_path / "production.jsonl", rows)
    candidate = evaluate_file(tmp_path / "candidate.jsonl", [(s, i, i > 0) for s, i, _ in rows])
    status, out, err = gate(capsys, production, candidate)
    assert status in gate_command.EXIT_STATUS.values(), err[-2000:]  # read: a verdict, not 2
    assert "  \\x1b]0;title\\x07\\x1b[2J  " in out and not CONTROLS.search(out)


def bounded_read(path) -> int:
    """Read the file as the gate does; the lines it yielded before refusing (RunFormatError)."""
    yielded = 0
    with pytest.raises(RunFormatError, match=f"more than {MAX_FILE_LINES:,} lines"):
        for _ in gate_command._lines(str(path)):
            yielded += 1
            assert yielded <= MAX_FILE_LINES, "read more lines than a file may hold"
    return yielded


def test_a_gzip_of_carriage_returns_is_refused_before_a_line_is_read(tmp_path, capsys):
    """245 KB of gzip: 245 lines of "\\n", each 1 MiB of "\\r". Before, "\\n" alone was counted and
    each "\\r" read as a blank line: 245 million of them, 30 CPU-s, before exit 2."""
    path = tmp_path / "production.jsonl.gz"
    path.write_bytes(gzip.compress(b"\r" * (2**20 - 1) + b"\n", compresslevel=9, mtime=0) * 245)  # members
    assert 200_000 < path.stat().st_size < 400_000
    assert bounded_read(path) == 0  # refused on its first block
    status, out, err = gate(capsys, path)
    assert status == 2 and out == "" and f"more than {MAX_FILE_LINES:,} lines" in err


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[f"U+{ord(b):04X}" for b in LINE_BREAKS])
def test_every_line_break_splitlines_honours_is_counted(tmp_path, brk):
    text = brk * (MAX_FILE_LINES + 1)
    path = tmp_path / "production.jsonl"
    path.write_text(text, newline="")
    bounded_read(path)  # a last "\r" may start a "\r\n", so that file is refused at its end
    runs = {role: [[path.name, text]] for role in ("production", "candidate")}  # the widget's two readers
    assert f"more than {MAX_FILE_LINES:,} lines" in run_view(WIDGET, {}, {"runs": runs})["error"]
    assert f"more than {MAX_FILE_LINES:,} lines" in run_view(WIDGET, {}, {"pasted": text})["error"]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_the_gate_splits_lines_as_str_splitlines_across_its_blocks(tmp_path, monkeypatch, suffix):
    """Tiny blocks, so a "\\r\\n" and a three-byte character are cut between two; and "\\r\\n" counts
    once (a file of them at the limit is read, not refused)."""
    monkeypatch.setattr(gate_command, "_BLOCK", 3)
    text = "ab\r\ncd\ré\u2028\x85x\r\r\n\n€€\x1c\x1d\x1e\x0b\x0cend\r"
    path = tmp_path / f"run{suffix}"
    write = gzip.open if suffix.endswith(".gz") else open
    with write(path, "wb") as stream:
        stream.write(text.encode())
    assert list(gate_command._lines(str(path))) == text.splitlines()
    monkeypatch.setattr(gate_command, "_BLOCK", 2**20)
    path = tmp_path / "plain.jsonl"
    path.write_bytes(b"\r\n" * MAX_FILE_LINES)
    assert sum(1 for _ in gate_command._lines(str(path))) == MAX_FILE_LINES
    path.write_bytes(b'{"a": 1}\n\xc3\x85\r\n\xff\n')
    with pytest.raises(RunFormatError, match=r"line 3: cannot read it \(not UTF-8 text"):
        list(gate_command._lines(str(path)))
