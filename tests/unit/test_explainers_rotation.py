"""explainers/rotation.py: cyclic rotations of the options and the rotation check's metrics, against
numpy's roll and an independent recount."""
from __future__ import annotations

import numpy as np
import pytest

import explainers

LETTERS = "ABCDEFGHIJ"


@pytest.mark.parametrize("options", [2, 4, 10])
def test_rotation_moves_each_option_shift_places_down_as_numpy_roll_does(options):
    choices = [f"option {i}" for i in range(options)]
    for shift in range(2 * options):
        rotated = explainers.rotate_options(choices, shift)
        assert rotated == list(np.roll(np.array(choices), shift))
        for i, letter in enumerate(LETTERS[:options]):
            moved = explainers.rotated_letter(letter, shift, options)
            assert rotated[LETTERS.index(moved)] == choices[i]  # the key moves with its text
            assert explainers.original_letter(moved, shift, options) == letter


def test_metrics_equal_a_recount_and_a_position_bias_is_never_consistent():
    rng = np.random.default_rng(7)
    answers = [[LETTERS[x] for x in rng.integers(0, 4, size=4)] for _ in range(200)]
    answers += [["C"] * 4] * 30  # consistent, right
    answers += [["B"] * 4] * 20  # consistent, wrong
    keys = [LETTERS[x] for x in rng.integers(0, 4, size=200)] + ["C"] * 30 + ["D"] * 20
    got = explainers.rotation_metrics(answers, keys)
    table = np.array([[ord(x) for x in a] for a in answers])
    key = np.array([ord(k) for k in keys])
    assert got["consistent"] == pytest.approx(np.mean((table == table[:, :1]).all(axis=1)))
    assert got["accuracy_all_rotations"] == pytest.approx(np.mean((table == key[:, None]).all(axis=1)))
    assert got["accuracy_first_rotation"] == pytest.approx(np.mean(table[:, 0] == key))
    assert got["accuracy_mean"] == pytest.approx(np.mean(table == key[:, None]))
    # Always answering the first position: the original letters differ in every rotation.
    always_a = [[explainers.original_letter("A", shift, 4) for shift in range(4)] for _ in keys]
    assert explainers.rotation_metrics(always_a, keys)["consistent"] == 0


@pytest.mark.parametrize("call, message", [
    (lambda: explainers.rotate_options(["only"], 1), "2 to 10"),
    (lambda: explainers.rotate_options(["a", "b"], -1), "shift must be at least 0"),
    (lambda: explainers.rotated_letter("E", 1, 4), "letter must be one of A, B, C, D"),
    (lambda: explainers.rotation_metrics([["A"], ["A", "B"]], ["A", "B"]), "same number"),
    (lambda: explainers.rotation_metrics([["A"]], ["A", "B"]), "one list of answers per key"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
