"""`python -m benchmarks mmlu download`: fetch the official MMLU release into MMLU_DATA_DIR.

The official archive (data.tar, about 166 MB) holds data/{dev,val,test}/<subject>_<split>.csv and
an auxiliary training set we do not need. Only the three evaluation splits are extracted, with
their original names and bytes, and subjects.csv is written beside them (subject, subcategory,
group, and the row count of each split) so the site can read the directory directly.
"""
from __future__ import annotations

import argparse
import csv
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from engine.config import default_config

from ..data import SPLITS
from ..subject_table import SUBJECT_GROUPS
from . import data_dir

OFFICIAL_URL = "https://people.eecs.berkeley.edu/~hendrycks/data.tar"
_MEMBER = re.compile(r"^(?:\./)?data/(dev|val|test)/([a-z_]+)_(dev|val|test)\.csv$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=OFFICIAL_URL, help="where the data.tar archive is (default: the official release)")
    parser.add_argument("--dest", type=Path, default=None, help="directory to fill (default: MMLU_DATA_DIR)")
    parser.add_argument("--force", action="store_true", help="replace files already in --dest")


def fetch(url: str, into: Path, out=sys.stderr) -> None:
    """Stream url to a file, printing progress every 10 MB."""
    with urllib.request.urlopen(url, timeout=60) as response, open(into, "wb") as fh:
        total = int(response.headers.get("Content-Length") or 0)
        done = 0
        next_report = 0
        while chunk := response.read(1 << 20):
            fh.write(chunk)
            done += len(chunk)
            if done >= next_report:
                of_total = f" of {total / 1e6:.0f}" if total else ""
                print(f"\rdownloaded {done / 1e6:.0f}{of_total} MB", end="", file=out, flush=True)
                next_report += 10 << 20
    print(file=out)


def extract_splits(archive: Path, dest: Path) -> dict[tuple[str, str], int]:
    """Copy the dev/val/test CSVs out of the archive; return rows per (subject, split)."""
    counts: dict[tuple[str, str], int] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            match = _MEMBER.match(member.name)
            if not member.isfile() or not match or match.group(1) != match.group(3):
                continue
            split, subject = match.group(1), match.group(2)
            target = dest / split / f"{subject}_{split}.csv"
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, open(target, "wb") as fh:
                shutil.copyfileobj(src, fh)
            with open(target, newline="", encoding="utf-8") as fh:
                counts[(subject, split)] = sum(1 for _ in csv.reader(fh))
    return counts


def write_subjects(dest: Path, counts: dict[tuple[str, str], int]) -> int:
    """Write subjects.csv for every subject found in all three splits; return how many."""
    subjects = sorted({subject for subject, _ in counts if all((subject, s) in counts for s in SPLITS)})
    unknown = [s for s in subjects if s not in SUBJECT_GROUPS]
    if unknown:
        raise ValueError(f"the archive has subjects this version does not know: {', '.join(unknown)}")
    with open(dest / "subjects.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["subject", "subcategory", "group", *SPLITS])
        for subject in subjects:
            writer.writerow([subject, *SUBJECT_GROUPS[subject], *(counts[(subject, s)] for s in SPLITS)])
    return len(subjects)


def run(args: argparse.Namespace) -> int:
    dest = args.dest or data_dir(default_config())
    if (dest / "subjects.csv").exists() and not args.force:
        print(f"{dest} already holds MMLU data; use --force to replace it", file=sys.stderr)
        return 1
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "data.tar"
        print(f"fetching {args.url}", file=sys.stderr)
        try:
            fetch(args.url, archive)
        except OSError as error:
            print(f"could not download {args.url}: {error}", file=sys.stderr)
            return 2
        try:
            counts = extract_splits(archive, dest)
        except tarfile.TarError as error:
            print(f"{args.url} is not a readable tar archive: {error}", file=sys.stderr)
            return 2
    n = write_subjects(dest, counts)
    rows = {s: sum(c for (_, split), c in counts.items() if split == s) for s in SPLITS}
    print(f"wrote {n} subjects to {dest}: " + ", ".join(f"{s} {rows[s]:,}" for s in SPLITS))
    return 0
