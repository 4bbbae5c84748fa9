"""How a scored result is read out to the reader (benchmarks/server/reading.py): a coin toss between the
top two letters, or probability mostly off the letters, each pointed out with its rule. The results
here are shaped like the scorer's; no model is loaded."""
from __future__ import annotations

import pytest

import explainers
from benchmarks.server.reading import CLOSE_SPLIT, LETTERS_SHARE, reading


def result(probabilities: dict, share: float = 0.95, top: str = " A", method: str = "letter") -> dict:
    return {"method": method, "probabilities": probabilities, "vocabulary_share": share,
            "top_next_tokens": [{"token": top, "probability": 0.41}],
            "options": [{"continuation": f" {letter}"} for letter in probabilities]}


def test_top_two_is_the_first_letters_share_of_the_pair():
    pair = explainers.top_two({"A": 0.486, "B": 0.495, "C": 0.01, "D": 0.009})
    assert (pair["first"], pair["second"]) == ("B", "A")
    assert pair["split"] == pytest.approx(0.495 / 0.981)
    assert explainers.top_two({"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25})["first"] == "A"  # ties: listed first
    assert explainers.top_two({"A": 0.0, "B": 0.0})["split"] == 0.5
    with pytest.raises(ValueError, match="letter_probs"):
        explainers.top_two({"A": 1.0})


def test_the_issues_example_is_a_coin_toss_with_most_mass_elsewhere():
    """49.5 % against 48.6 %, the letters holding 16 %, <|im_end|> the likeliest token (issue 13, item 10)."""
    read = reading(result({"A": 0.486, "B": 0.495, "C": 0.01, "D": 0.009}, share=0.16, top="<|im_end|>"))
    assert read["close"] and read["letters_off"] and read["headline"] == "A coin toss, not a choice"
    toss, elsewhere = read["notes"]
    assert "between B (49.5%) and A (48.6%)" in toss and "B gets 50.5%" in toss and "closer than 55:45" in toss
    assert "hold only 16.0%" in elsewhere and "“<|im_end|>” (41.0%), not a letter" in elsewhere
    assert read["rule"] == {"close_below": CLOSE_SPLIT, "letters_below": LETTERS_SHARE}


@pytest.mark.parametrize("probabilities, close", [
    ({"A": 0.54, "B": 0.46, "C": 0.0, "D": 0.0}, True),    # 54:46 is closer than 55:45
    ({"A": 0.56, "B": 0.44, "C": 0.0, "D": 0.0}, False),
    ({"A": 0.30, "B": 0.25, "C": 0.25, "D": 0.20}, True),  # 30 / 55 ≈ 0.545
    ({"A": 0.40, "B": 0.20, "C": 0.20, "D": 0.20}, False),
])
def test_close_is_the_split_rule_computed_from_the_numbers(probabilities, close):
    read = reading(result(probabilities))
    assert read["close"] is close and read["split"] == pytest.approx(explainers.top_two(probabilities)["split"])
    assert (read["headline"] is not None) is close


def test_a_clear_choice_gets_no_caution_and_the_option_method_no_mass_note():
    assert reading(result({"A": 0.9, "B": 0.05, "C": 0.03, "D": 0.02}))["notes"] == []
    option = reading(result({"A": 0.9, "B": 0.05, "C": 0.03, "D": 0.02}, share=0.001, method="option"))
    assert not option["letters_off"] and option["headline"] is None  # summed option texts: no next-token share


def test_mass_off_the_letters_alone_has_its_own_headline_and_names_a_letter_token_plainly():
    read = reading(result({"A": 0.9, "B": 0.05, "C": 0.03, "D": 0.02}, share=0.3, top=" A"))
    assert not read["close"] and read["headline"] == "Most of the model's probability is on no letter at all"
    assert "the rest is spread over other tokens" in read["notes"][0]


def test_ten_letters_are_named_by_their_range():
    letters = "ABCDEFGHIJ"
    read = reading(result({x: (0.5 if x == "C" else 0.5 / 9) for x in letters}, share=0.2, top="\n"))
    assert "letters A to J hold only 20.0%" in read["notes"][0] and "“\\n”" in read["notes"][0]
