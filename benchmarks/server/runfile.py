"""Run files on disk: the one reader and the one writer of every benchmark's ``evaluate`` (the
schema, sans I/O, is benchmarks/runfile.py). JSON Lines, gzip-compressed when the name ends ``.gz``.

Only complete lines count: a line without its newline is not a question (files written by
``mmlu evaluate`` before the shared writer appended line by line, so a kill could tear the last).

:class:`RunWriter` never leaves a half-written file: every save writes all rows to a temporary
file in the same folder, flushes and fsyncs it, and moves it over the run file with
``os.replace`` (atomic), so the run file is at every moment either its previous whole version or
the new one. Rows are saved as they come, at most every ``save_every`` seconds (and always at the
end, on Ctrl-C or on an error), so a killed run loses at most those seconds of work, and
``--resume`` continues from whole lines. A temporary file left by a killed run is removed when
the run file is opened again.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from benchmarks.runfile import dumps, group_of, normalise, question_key, settings_of

SAVE_EVERY_S = 10.0
TEMPORARY_SUFFIX = ".partial"


def _open_text(path: Path):
    """The run file opened for reading as text, through gzip when its name ends ``.gz``; lines end at
    a newline only and are kept as written (complete_lines' rule, which reads the text whole)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")  # noqa: SIM115 - the caller's with-block closes it


def iter_lines(path: Path) -> Iterator[str]:
    """The complete, non-blank lines of one ``.jsonl`` or ``.jsonl.gz`` file, as written, one at a
    time (a run's whole text is never held: the site summarises four runs of 14,042 rows)."""
    with _open_text(path) as fh:
        for line in fh:
            if line.endswith("\n") and line.strip():  # complete_lines' rule: whole and not blank
                yield line


def read_lines(path: Path) -> list[str]:
    """The complete, non-blank lines of one ``.jsonl`` or ``.jsonl.gz`` file, as written."""
    return list(iter_lines(path))


def row_of(line: str) -> dict:
    """One complete line's row, in the shared schema."""
    return normalise(json.loads(line))


def iter_rows(path: Path) -> Iterator[dict]:
    """The rows of the complete lines of one ``.jsonl`` or ``.jsonl.gz`` file, one at a time."""
    return map(row_of, iter_lines(path))


def read_rows(path: Path) -> list[dict]:
    """The rows of the complete lines of one ``.jsonl`` or ``.jsonl.gz`` file, in the shared schema."""
    return list(iter_rows(path))


def first_row(path: Path) -> dict | None:
    """The first row of a run file (its settings), without reading the rest; None if it has none."""
    lines = iter_lines(path)
    try:
        return next(map(row_of, lines), None)
    finally:
        lines.close()


def one_run(path: Path, rows: list[dict], error: type[ValueError], also=lambda row: ()) -> dict[tuple[str, int], dict]:
    """A published run's rows by (group, index), checked to be one run: one setting (method, split,
    shots, model, and what ``also`` adds), no question twice; else ``error`` naming the file."""
    settings = {(r.get("method"), r.get("split"), r.get("shots"), r.get("model"), *also(r)) for r in rows}
    if len(settings) != 1:
        raise error(f"{path.name} mixes {len(settings)} settings (method, split, shots, model)")
    by_key = {(group_of(r), r["index"]): r for r in rows}
    if len(by_key) != len(rows):
        raise error(f"{path.name} is not one complete test run: it holds a question twice ({len(by_key)} distinct "
                    f"questions in {len(rows)} rows)")
    return by_key


def _temporaries(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.*{TEMPORARY_SUFFIX}"))


class RunWriter:
    """Write a run file atomically, whole rows only; with ``resume``, keep the rows already there.

    ``settings`` (method, split) are the run's: resuming a file that holds rows of other settings
    is refused (a ValueError naming them). :meth:`done` is the set of question keys already
    written (benchmarks/runfile.question_key), the questions a resumed run skips.
    """

    def __init__(self, out: Path, settings: tuple[str, str] | None = None, resume: bool = False,
                 save_every: float = SAVE_EVERY_S):
        self.out = Path(out)
        self.save_every = save_every
        self.lines: list[str] = []
        self.rows: list[dict] = []
        self._saved_at = 0.0
        for stale in _temporaries(self.out):  # left by a run killed in the middle of a save
            stale.unlink(missing_ok=True)
        if resume and self.out.exists():
            self.lines = read_lines(self.out)
            self.rows = [row_of(line) for line in self.lines]
            other = {settings_of(r) for r in self.rows} - {settings} if settings is not None else set()
            if other:
                raise ValueError(f"{self.out} holds rows of another run ({sorted(other)}); resume it with the same "
                                 "options")
        self._unsaved = not (resume and self.out.exists())  # a new run replaces the file even if it scores nothing

    def done(self) -> set:
        return {question_key(r) for r in self.rows}

    def add(self, rows: Iterable[dict]) -> None:
        """Append whole rows; save if the last save is ``save_every`` seconds old."""
        for row in rows:
            self.lines.append(dumps(row))
            self.rows.append(row)
        self._unsaved = True
        if time.monotonic() - self._saved_at >= self.save_every:
            self.save()

    def save(self) -> None:
        """Write every row to a temporary file beside the run file, fsync it, and move it into place."""
        data = "".join(self.lines).encode("utf-8")
        if self.out.suffix == ".gz":
            buffer = io.BytesIO()
            with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
                gz.write(data)
            data = buffer.getvalue()
        parent = self.out.parent if str(self.out.parent) else Path(".")
        parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.out.name}.", suffix=TEMPORARY_SUFFIX, dir=parent)
        try:
            with os.fdopen(handle, "wb") as sink:
                sink.write(data)
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(temporary, self.out)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        try:  # the rename itself survives a power cut once the folder is synced (not on every system)
            folder = os.open(parent, os.O_RDONLY)
        except OSError:
            folder = None
        if folder is not None:
            try:
                os.fsync(folder)
            except OSError:
                pass
            finally:
                os.close(folder)
        self._saved_at = time.monotonic()
        self._unsaved = False

    def close(self) -> None:
        """Save what is not saved yet."""
        if self._unsaved:
            self.save()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_rows(rows: Iterable[dict], out: Path) -> None:
    """Write a whole run file at once, atomically."""
    writer = RunWriter(out, save_every=float("inf"))
    writer.add(rows)
    writer.close()
