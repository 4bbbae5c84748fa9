"""The MMLU-Pro reader on the real release files (../shared/data/mmlu-pro, SOURCE.md there gives
every count checked here) and on missing or broken files."""
from __future__ import annotations

import shutil

import pytest

from benchmarks.mmlu_pro.data import LETTERS, DataMissing, clean_options
from benchmarks.mmlu_pro.server import data_dir
from benchmarks.mmlu_pro.server.reader import MMLUProData
from engine import create_app

DATA = MMLUProData(data_dir({}))
pytestmark = pytest.mark.skipif(not (DATA.root / "test-00000-of-00001.parquet").is_file(),
                                reason="the MMLU-Pro release is not in MMLU_PRO_DATA_DIR")

CATEGORY_SIZES = {"math": 1351, "physics": 1299, "chemistry": 1132, "law": 1101, "engineering": 969, "other": 924,
                  "economics": 844, "health": 818, "psychology": 798, "business": 789, "biology": 717,
                  "philosophy": 499, "computer science": 410, "history": 381}


def test_split_sizes():
    assert len(DATA.questions("test")) == 12032
    assert len(DATA.questions("validation")) == 70


def test_fourteen_categories_with_their_sizes():
    assert DATA.category_sizes("test") == CATEGORY_SIZES
    assert DATA.categories[0] == "math" and DATA.categories[-1] == "history"
    assert DATA.category_sizes("validation") == dict.fromkeys(CATEGORY_SIZES, 5)


def test_option_counts():
    assert DATA.option_counts("test") == {3: 20, 4: 607, 5: 52, 6: 93, 7: 158, 8: 320, 9: 801, 10: 9981}
    total = sum(len(q.options) for q in DATA.questions("test"))
    assert round(total / 12032, 3) == 9.474  # §3.2 gives 9.47


def test_sources():
    assert DATA.source_counts("test") == {"ori_mmlu": 6810, "stemez": 4083, "theoremQA": 598, "scibench": 541}
    assert set(DATA.source_counts("validation")) == {"cot_lib"}


def test_answer_letters():
    assert DATA.answer_counts("test") == {"A": 1403, "B": 1352, "C": 1314, "D": 1336, "E": 1149, "F": 1128,
                                          "G": 1182, "H": 1115, "I": 1108, "J": 945}
    for q in DATA.questions("test"):
        assert q.answer == LETTERS[q.answer_index] and q.answer_index < len(q.options)


def test_options_are_stripped_as_the_2026_revision_does():
    assert DATA.padded_options("test") == 636
    assert DATA.padded_options("validation") == 0
    for q in DATA.questions("test"):
        assert all(option == option.strip() for option in q.options)
    assert clean_options(["  0.5", "1 ", "N/A"]) == ("0.5", "1")


def test_validation_fillers_are_dropped_and_shots_are_in_file_order():
    shots = DATA.shots("math")
    assert len(shots) == 5 and shots[0].question_id == 0 and shots[0].answer == "A" and shots[0].options[0] == "0"
    assert all("N/A" not in q.options for q in DATA.questions("validation"))
    assert sum(len(q.raw_options) - len(q.options) for q in DATA.questions("validation")) == 51
    assert all(q.cot_content.startswith("A: Let's think step by step.") for q in DATA.questions("validation"))


def test_spot_checks_from_source_md():
    first = DATA.questions("test")[0]
    assert (first.question_id, first.category, first.src, len(first.options), first.answer) == \
        (70, "business", "ori_mmlu-business_ethics", 9, "I")
    last = DATA.questions("test")[-1]
    assert (last.question_id, last.answer, last.options[LETTERS.index(last.answer)]) == (12256, "F", "83.3%")


def test_question_lookup_and_its_errors():
    q = DATA.question("history", "test", 0)
    assert q.category == "history" and q.index == 0
    with pytest.raises(IndexError, match="history test has 381 questions"):
        DATA.question("history", "test", 381)
    with pytest.raises(KeyError, match="unknown category"):
        DATA.in_category("astrology")
    with pytest.raises(KeyError, match="unknown split"):
        DATA.questions("dev")


def test_a_missing_folder_is_a_clear_message(tmp_path):
    with pytest.raises(DataMissing, match="MMLU_PRO_DATA_DIR"):
        MMLUProData(tmp_path / "nowhere").questions("test")


def test_a_corrupt_file_is_a_clear_message(tmp_path):
    for name in ("test-00000-of-00001.parquet", "validation-00000-of-00001.parquet"):
        (tmp_path / name).write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DataMissing, match="could not be read as Parquet"):
        MMLUProData(tmp_path).questions("test")


def test_without_the_data_the_site_stays_up_and_the_routes_say_why(tmp_path):
    app = create_app({"TESTING": True, "MMLU_PRO_DATA_DIR": tmp_path / "nowhere"})
    client = app.test_client()
    assert client.get("/mmlu/").status_code == 200
    assert client.get("/mmlu-pro/").status_code == 200
    response = client.get("/api/mmlu-pro/questions")
    assert response.status_code == 503
    assert "MMLU_PRO_DATA_DIR" in response.get_json()["error"]


def test_a_corrupt_file_leaves_the_site_up(tmp_path):
    shutil.copy(DATA.root / "validation-00000-of-00001.parquet", tmp_path)
    (tmp_path / "test-00000-of-00001.parquet").write_bytes(b"\x00" * 64)
    client = create_app({"TESTING": True, "MMLU_PRO_DATA_DIR": tmp_path}).test_client()
    assert client.get("/mmlu-pro/").status_code == 200
    response = client.get("/api/mmlu-pro/questions/math?index=0")
    assert response.status_code == 503 and "could not be read" in response.get_json()["error"]
