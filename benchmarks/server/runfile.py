"""Files of scored questions, as the papers' ``evaluate`` commands write them: JSON Lines, one
object per question (the scorer's result plus the question's identity), optionally gzip-compressed
as the papers publish their runs.

Only complete lines count: a run killed mid-write leaves a torn last line, which is not a question.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path


def read_rows(path: Path) -> list[dict]:
    """The rows of the complete lines of one ``.jsonl`` or ``.jsonl.gz`` file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.endswith("\n") and line.strip()]
