"""Issue 26: the scorer's memory through long prompts. In the server a packed forward pass runs at
most PASS_TOKENS tokens (a pass's activations grow with its tokens; eight rows of a long 5-shot
question's own tokens made passes of 6,400); Scorer's own default (the batch command) has no bound,
so its rows are packed as before. The numbers are the reference's either way (tests/model/test_fast_scoring.py)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from livescoring.scorer import BATCH_ROWS, PASS_TOKENS, Scorer, _Row


def scorer(**settings) -> Scorer:
    return Scorer(SimpleNamespace(model=None), decoder=object(), **settings)  # no model: batching only


def rows(lengths) -> list[_Row]:
    return [_Row(i, tuple(range(n)), ((n - 1, None, None),)) for i, n in enumerate(lengths)]


@pytest.mark.parametrize("seed", range(5))
def test_a_packed_pass_runs_at_most_pass_tokens_tokens_and_batch_rows_rows(seed):
    generator = random.Random(seed)
    reused = 2500  # a long 5-shot prefix, as high_school_european_history's
    lengths = sorted(reused + generator.choice([20, 300, 800, 1200, 2600]) for _ in range(40))
    given = rows(lengths)
    batches = scorer(pass_tokens=PASS_TOKENS).batches(given, reused)
    assert [row for batch in batches for row in batch] == given  # every row once, in order
    for batch in batches:
        own = sum(len(row.tokens) - reused for row in batch)
        assert len(batch) <= BATCH_ROWS
        assert own <= PASS_TOKENS or len(batch) == 1  # a row longer than the bound runs alone


def test_short_questions_still_fill_whole_batches():
    assert [len(b) for b in scorer(pass_tokens=PASS_TOKENS).batches(rows([150] * 20), 100)] == [8, 8, 4]
    assert [len(b) for b in scorer(pass_tokens=100).batches(rows([40] * 6), 0)] == [2, 2, 2]
    assert [len(b) for b in scorer(batch_rows=3, pass_tokens=10**6).batches(rows([40] * 7), 0)] == [3, 3, 1]


def test_the_server_bounds_its_passes_and_the_batch_command_packs_as_before(monkeypatch):
    from livescoring import worker
    from livescoring.model import ModelSettings

    made = {}
    monkeypatch.setattr(worker, "load", lambda settings: SimpleNamespace(name="m", device="cpu", load_seconds=0.0))
    monkeypatch.setattr(worker, "Scorer", lambda loaded, **settings: made.update(settings) or SimpleNamespace(loaded=loaded))
    service = worker.ScoringService(ModelSettings())
    monkeypatch.setattr(service, "_serve", lambda: None)
    service._run()  # the worker thread's start: load, make the scorer, (here not) serve
    assert made["pass_tokens"] == PASS_TOKENS
    assert [len(b) for b in scorer().batches(rows([2500 + 800] * 9), 2500)] == [8, 1]
    assert [len(b) for b in scorer(pass_tokens=PASS_TOKENS).batches(rows([2500 + 800] * 9), 2500)] == [2, 2, 2, 2, 1]


def test_giving_freed_memory_back_is_safe_to_call_anywhere():
    from livescoring.scorer import return_freed_memory

    return_freed_memory()  # glibc's malloc_trim here; nothing where there is none
    return_freed_memory()
