"""Which rows a loglikelihood call runs (no model: Scorer._rows on token ids). The numbers they give
are the reference's (tests/model/test_fast_scoring.py, tests/model/test_harness_equality.py)."""
from __future__ import annotations

from livescoring.scorer import Scorer, _Context


def rows_for(context_ids, continuation_ids):
    context = _Context("text", "", [str(c) for c in continuation_ids], list(context_ids), [list(c) for c in continuation_ids])
    return Scorer._rows(0, context)


def reads_by_whose(rows):
    found = {}
    for row in rows:
        for pos, token, whose in row.reads:
            found.setdefault(whose, []).append((row.tokens[:pos + 1], token))
    return found


def test_continuations_that_differ_only_in_their_last_token_run_as_one_row():
    """A chat prompt ends in a newline, which the harness moves into each continuation: "\\nA" … "\\nD"
    are each two tokens, newline then letter. One row (context + newline) reads all four letters and
    the whole distribution after the context."""
    context, newline = (5, 6, 7), 10
    (row,) = rows_for(context, [(newline, letter) for letter in (21, 22, 23, 24)])
    assert row.tokens == context + (newline,)
    assert sorted(row.reads, key=str) == sorted([(2, None, None)] + [(3, letter, c) for c, letter in enumerate((21, 22, 23, 24))],
                                                key=str)


def test_the_contexts_own_read_rides_on_a_continuations_row_and_distinct_options_keep_theirs():
    context = (5, 6, 7)
    options = [(30, 31, 32), (40, 41), (30, 33)]
    rows = rows_for(context, options)
    # The first and the last option run context + (30, 31) and context + (30,): one row holds both.
    assert sorted(row.tokens for row in rows) == [context + (30, 31), context + (40,)]
    found = reads_by_whose(rows)
    assert found[None] == [(context, None)]
    for c, option in enumerate(options):  # each later token read after the tokens before it
        assert found[c] == [(context + option[:i], option[i]) for i in range(1, len(option))]


def test_one_token_continuations_read_the_context_row():
    (row,) = rows_for((5, 6, 7), [(21,), (22,)])
    assert row.tokens == (5, 6, 7) and row.reads == ((2, None, None),)
