"""The converted-model cache is verified, not trusted (issue 11, item 5).

Fast tests use a stand-in model whose "weights" are small files, so the cache logic runs without
loading torch weights; the test marked ``model`` corrupts a real cache and checks that the
re-converted model scores exactly as a clean one.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from livescoring import model as model_module
from livescoring.model import CHECKSUMS, ModelSettings, cache_problem, load, remove_stale_staging

pytestmark = pytest.mark.slow  # the first load imports torch and safetensors (seconds, on each worker)


class SafetensorError(Exception):
    """What safetensors raises on a full disk: not an OSError."""


class FakeConfig:
    model_type = "stand-in"  # not one the lean decoder computes: transformers' decoder, never called
    max_position_embeddings = 2048


class FakeModel:
    """Saves a 64 KiB "weights" file; ``fail`` makes saving raise as a full disk would."""

    def __init__(self, fail: Exception | None = None):
        self.config, self.fail, self.hf_quantizer = FakeConfig(), fail, None

    def save_pretrained(self, directory):
        if self.fail:
            (Path(directory) / "model.safetensors").write_bytes(b"\0" * 1000)  # a partial write first
            raise self.fail
        (Path(directory) / "model.safetensors").write_bytes(bytes(range(256)) * 256)
        (Path(directory) / "config.json").write_text("{}")

    def to(self, *_args):
        return self

    def eval(self):
        return self


class FakeTokenizer:
    def save_pretrained(self, directory):
        (Path(directory) / "tokenizer.json").write_text("{}")


@pytest.fixture()
def fake_loader(tmp_path, monkeypatch):
    """load() with the GGUF and transformers replaced: records which source each load read."""
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + b"x" * 100)
    calls, saving = [], {"fail": None}
    monkeypatch.setattr(model_module, "packaged_gguf", lambda: gguf)
    monkeypatch.setattr(model_module, "check_available", lambda settings: None)

    def fake_pretrained(source, dtype, decoder_on=None, **kwargs):
        calls.append("gguf" if "gguf_file" in kwargs else "cache")
        if "gguf_file" not in kwargs and (Path(source) / "config.json").read_text() != "{}":
            raise ValueError("not a model")
        model = FakeModel(saving["fail"])
        return model.config, model, FakeTokenizer(), None

    monkeypatch.setattr(model_module, "_load_pretrained", fake_pretrained)
    settings = ModelSettings(cache_dir=tmp_path / "cache", device="cpu")
    return settings, calls, saving, lambda: model_module.cache_location(settings, gguf)


def test_a_clean_cache_is_written_with_checksums_and_used(fake_loader):
    settings, calls, _, where = fake_loader
    assert not load(settings).from_cache
    assert json.loads((where() / CHECKSUMS).read_text())["model.safetensors"][0] == 65536
    assert load(settings).from_cache and calls == ["gguf", "cache"]


@pytest.mark.parametrize("damage", ["zeros", "truncate", "no-checksums", "garbled-checksums", "garbled-config"])
def test_a_damaged_cache_is_converted_again_and_replaced(fake_loader, damage):
    settings, calls, _, where = fake_loader
    load(settings)
    weights = where() / "model.safetensors"
    if damage == "zeros":
        weights.write_bytes(b"\0" * weights.stat().st_size)  # same size, wrong bytes
    elif damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:1000])
    elif damage == "no-checksums":
        (where() / CHECKSUMS).unlink()
    elif damage == "garbled-checksums":
        (where() / CHECKSUMS).write_text("{not json")
    else:
        (where() / "config.json").write_text("garbage")
        model_module.write_checksums(where())  # checksums match, yet it does not load
    assert not load(settings).from_cache and calls[-1] == "gguf"
    assert cache_problem(where()) is None  # replaced by a good copy
    assert load(settings).from_cache
    assert not [p for p in where().parent.iterdir() if p.name.startswith(".converting-")]


def test_a_full_disk_serves_from_memory_and_leaves_no_staging(fake_loader):
    settings, calls, saving, where = fake_loader
    saving["fail"] = SafetensorError("No space left on device")
    loaded = load(settings)  # not a ModelUnavailable: the model works, it is only not cached
    assert not loaded.from_cache and not where().exists()
    assert not list(where().parent.iterdir())
    saving["fail"] = None  # space is back: the next start caches it
    load(settings)
    assert load(settings).from_cache


def test_staging_left_by_a_dead_process_is_removed(tmp_path):
    dead = tmp_path / ".converting-999999999-abc"
    alive = tmp_path / f".converting-{os.getpid()}-def"
    for directory in (dead, alive):
        directory.mkdir()
        (directory / "model.safetensors").write_bytes(b"\0" * 100)
    remove_stale_staging(tmp_path)
    assert not dead.exists() and alive.exists()


@pytest.mark.model
def test_a_corrupted_real_cache_reconverts_and_scores_the_same(tmp_path):
    from benchmarks.mmlu import prompt
    from benchmarks.server.multiple_choice import answer_question
    from livescoring.scorer import Scorer

    settings = ModelSettings(cache_dir=tmp_path, device="cpu", threads=1)
    question = ("Why is the sky blue?", ["Reflection of the ocean", "Dust", "Rayleigh scattering", "Ozone"])

    def letters(loaded):
        return answer_question(Scorer(loaded), prompt_format=prompt, subject="astronomy", question=question[0],
                               choices=question[1], key="C")["probabilities"]

    # Start from a copy of the session's verified cache when there is one (the conversion is the
    # slow part, and the test needs only one: the one the damage causes).
    from engine.config import default_config

    shared = ModelSettings.from_config(default_config())
    seed = model_module.cache_location(shared, model_module.packaged_gguf()) if shared.cache_dir else None
    if seed is not None and seed.is_dir() and cache_problem(seed) is None:
        import shutil

        shutil.copytree(seed, tmp_path / seed.name)
    clean = load(settings)
    expected = letters(clean)
    weights = next(tmp_path.glob("smollm2-*")) / "model.safetensors"
    with open(weights, "r+b") as fh:  # 20 MiB of zeros in the middle of the weights
        fh.seek(weights.stat().st_size // 2)
        fh.write(b"\0" * (20 << 20))
    again = load(settings)
    assert not again.from_cache
    assert letters(again) == pytest.approx(expected, abs=1e-6)
    import gguf
    from gguf.gguf_reader import GGUFReader
    from gguf.tensor_mapping import get_tensor_name_map

    # The conversion's parse-once stand-ins (model._gguf_read_once) are gone once it is done.
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (GGUFReader, get_tensor_name_map)
    assert load(settings).from_cache
