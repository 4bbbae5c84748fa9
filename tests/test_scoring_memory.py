"""Issue 26: the scorer's memory through long prompts. A packed forward pass runs at most
``pass_tokens`` tokens (a pass's activations grow with its tokens; eight rows of a long 5-shot
question's own tokens made passes of 6,400), and a scoring pass keeps no layer's keys and values
once the next layer has them. The numbers are the reference's either way (tests/test_fast_scoring.py)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from livescoring.scorer import BATCH_ROWS, PASS_TOKENS, Scorer, _Row


def scorer(**settings) -> Scorer:
    return Scorer(SimpleNamespace(model=None), decoder=object(), **settings)  # no model: batching only


def rows(lengths) -> list[_Row]:
    return [_Row(i, None, tuple(range(n)), ((n - 1, None),)) for i, n in enumerate(lengths)]


@pytest.mark.parametrize("seed", range(5))
def test_a_packed_pass_runs_at_most_pass_tokens_tokens_and_batch_rows_rows(seed):
    generator = random.Random(seed)
    reused = 2500  # a long 5-shot prefix, as high_school_european_history's
    lengths = sorted(reused + generator.choice([20, 300, 800, 1200, 2600]) for _ in range(40))
    given = rows(lengths)
    batches = scorer().batches(given, reused)
    assert [row for batch in batches for row in batch] == given  # every row once, in order
    for batch in batches:
        own = sum(len(row.tokens) - reused for row in batch)
        assert len(batch) <= BATCH_ROWS
        assert own <= PASS_TOKENS or len(batch) == 1  # a row longer than the bound runs alone


def test_short_questions_still_fill_whole_batches():
    assert [len(b) for b in scorer().batches(rows([150] * 20), 100)] == [8, 8, 4]
    assert [len(b) for b in scorer(pass_tokens=100).batches(rows([40] * 6), 0)] == [2, 2, 2]
    assert [len(b) for b in scorer(batch_rows=3, pass_tokens=10**6).batches(rows([40] * 7), 0)] == [3, 3, 1]


def test_giving_freed_memory_back_is_safe_to_call_anywhere():
    from livescoring.scorer import return_freed_memory

    return_freed_memory()  # glibc's malloc_trim here; nothing where there is none
    return_freed_memory()
