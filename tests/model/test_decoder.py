"""The scorer's two decoders compute the same thing: the lean Llama one against transformers' own.

tests/model/test_fast_scoring.py holds the scorer (on the lean decoder, SmolLM2 being a Llama) to the
full-prompt reference path; here the decoders are compared directly, layer caches included, on a
real prefix and rows of different lengths (packed one after another by the lean decoder, padded
by transformers'), and the scorer on transformers' decoder is held to the reference too, so a
model of another family is scored just as exactly.
"""
from __future__ import annotations

import copy

import pytest

from benchmarks.mmlu import prompt
from benchmarks.server.multiple_choice import answer_question, answer_questions
from livescoring.decoder import (
    LlamaDecoder,
    TransformersDecoder,
    decoder_for,
    default_inverse_frequencies,
    written_out_attention,
)
from livescoring.scorer import Scorer

pytestmark = pytest.mark.model


def test_smollm2_gets_the_lean_decoder_and_other_families_transformers(loaded_model):
    assert isinstance(decoder_for(loaded_model.model), LlamaDecoder)
    assert isinstance(Scorer(loaded_model).decoder, LlamaDecoder)
    other = copy.copy(loaded_model.model)
    other.config = copy.deepcopy(loaded_model.model.config)
    other.config.attention_bias = True  # a configuration the lean decoder does not write out
    assert isinstance(decoder_for(other), TransformersDecoder)
    other.config = copy.deepcopy(loaded_model.model.config)
    other.config.model_type = "gpt2"
    assert isinstance(decoder_for(other), TransformersDecoder)


def test_the_decoder_read_from_the_checkpoint_is_the_modules_bit_for_bit(loaded_model):
    """What the model server loads (the lean decoder straight from the converted safetensors, no
    transformers module) holds the very tensors the module's decoder holds, and computes the same."""
    import torch

    from engine.config import default_config
    from livescoring.model import ModelSettings, load

    # The session's model was loaded with this cache, so the converted checkpoint is there.
    settings = ModelSettings(device="cpu", threads=1, cache_dir=default_config()["MODEL_CACHE_DIR"])
    lean = load(settings, module=False)
    assert lean.model is None and isinstance(lean.decoder, LlamaDecoder)
    assert lean.context_length == loaded_model.context_length and lean.from_cache
    module = loaded_model.decoder
    assert torch.equal(lean.decoder.inv_freq, module.inv_freq)
    assert torch.equal(default_inverse_frequencies(loaded_model.model.config), loaded_model.model.model.rotary_emb.inv_freq)
    assert lean.decoder.head is lean.decoder.embed  # tied, as in the module: one copy
    for name in ("embed", "final_norm", "head"):
        assert torch.equal(getattr(lean.decoder, name), getattr(module, name)), name
    for mine, theirs in zip(lean.decoder.layers, module.layers, strict=True):
        assert all(torch.equal(a, b) for a, b in zip(mine, theirs, strict=True))
    rows = [lean.tokenizer("The capital of France is", add_special_tokens=False)["input_ids"]]
    with torch.inference_mode():
        reads = [(0, len(rows[0]) - 1)]
        # The same tensors, but held at other addresses: outside the model server (which asks MKL for
        # reproducible products) a product's last bits may follow its operands' alignment, so the
        # logits are compared to a few float32 ulps (one CI run found them apart in the last bits).
        torch.testing.assert_close(lean.decoder.logits(lean.decoder(rows, 0, reads=reads)[0]),
                                   loaded_model.model.lm_head(module(rows, 0, reads=reads)[0]), rtol=0, atol=1e-4)


# What the lean decoder and load() read of a configuration.
DECODER_FIELDS = ("model_type", "hidden_act", "rms_norm_eps", "max_position_embeddings", "tie_word_embeddings",
                  "attention_bias", "mlp_bias", "pretraining_tp", "num_attention_heads", "num_key_value_heads",
                  "hidden_size", "num_hidden_layers", "rope_parameters")


@pytest.mark.parametrize("written", ["packaged", "before transformers 5"])
def test_the_configuration_read_without_transformers_is_transformers_reading(written, tmp_path):
    import json

    from transformers import AutoConfig

    from engine.config import default_config
    from livescoring.model import ModelSettings, cache_location, packaged_gguf, plain_config

    directory = cache_location(ModelSettings(cache_dir=default_config()["MODEL_CACHE_DIR"]), packaged_gguf())
    if written != "packaged":  # the older layout: rope fields at the top, defaults left out
        raw = json.loads((directory / "config.json").read_text())
        for name in ("rope_parameters", "head_dim", "num_key_value_heads", "tie_word_embeddings", "rms_norm_eps"):
            raw.pop(name)
        raw["rope_theta"], raw["rope_scaling"] = 500000.0, None
        directory = tmp_path
        (directory / "config.json").write_text(json.dumps(raw))
    plain, theirs = plain_config(directory), AutoConfig.from_pretrained(directory, local_files_only=True)
    for field in DECODER_FIELDS:
        assert getattr(plain, field) == getattr(theirs, field), field
    assert (plain.head_dim or plain.hidden_size // plain.num_attention_heads) == theirs.head_dim


def test_the_two_decoders_agree_on_a_prefix_and_rows_of_different_lengths(loaded_model, mmlu_data):
    import torch

    lean, reference = LlamaDecoder.from_module(loaded_model.model), TransformersDecoder(loaded_model.model)
    encode = Scorer(loaded_model).encode
    shots = mmlu_data.questions("astronomy", "dev")[:5]
    header = "".join(p.text for p in prompt.prompt_parts("astronomy", "q", ["a", "b", "c", "d"], shots)
                     if p.kind in ("header", "shot"))
    prefix_ids = [encode(header)]
    questions = mmlu_data.questions("astronomy", "test")[:3]
    own = [encode(f"{q.question}\nA. {q.choices[0]}\nAnswer:") for q in questions]
    assert len(set(map(len, own))) == len(own)  # rows of different lengths: packed in one, padded in the other
    start = len(prefix_ids[0])
    every_prefix_token = [(0, p) for p in range(start)]
    real_tokens = [(i, p) for i, ids in enumerate(own) for p in range(len(ids))]  # every real token of every row
    with torch.inference_mode():
        lean_hidden, lean_layers = lean(prefix_ids, 0, reads=every_prefix_token)
        ref_hidden, ref_layers = reference(prefix_ids, 0, reads=every_prefix_token)
        assert lean_hidden.shape == (start, loaded_model.model.config.hidden_size)
        assert torch.allclose(lean_hidden, ref_hidden, atol=1e-4, rtol=1e-4)
        assert len(lean_layers) == len(ref_layers) == loaded_model.model.config.num_hidden_layers
        cache_only, cache_layers = lean(prefix_ids, 0)  # a prefix's own pass reads nothing
        assert cache_only.shape[0] == 0
        for (lk, lv), (rk, rv), (ck, cv) in zip(lean_layers, ref_layers, cache_layers, strict=True):
            assert lk.shape == rk.shape == (1, loaded_model.model.config.num_key_value_heads, start, lean.head_dim)
            assert torch.allclose(lk, rk, atol=1e-4, rtol=1e-4) and torch.allclose(lv, rv, atol=1e-4, rtol=1e-4)
            assert torch.equal(lk, ck) and torch.equal(lv, cv)
        lean_rows, _ = lean(own, start, lean_layers, reads=real_tokens)
        ref_rows, _ = reference(own, start, ref_layers, reads=real_tokens)
        last_only, _ = lean(own, start, lean_layers, reads=[(i, len(ids) - 1) for i, ids in enumerate(own)])
        backwards = real_tokens[::-1]  # reads in any order come back in that order
        backwards_rows, _ = lean(own, start, lean_layers, reads=backwards)
    assert torch.allclose(lean_rows, ref_rows, atol=1e-4, rtol=1e-4)
    ends = [real_tokens.index((i, len(ids) - 1)) for i, ids in enumerate(own)]
    assert torch.allclose(last_only, lean_rows[ends], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(lean_rows[ends[0]], lean_rows[ends[1]])
    assert torch.allclose(backwards_rows, lean_rows.flip(0), atol=1e-5, rtol=1e-5)


def test_the_scorer_on_transformers_decoder_equals_the_reference(loaded_model, mmlu_data):
    scorer, reference = Scorer(loaded_model, batch_rows=4), Scorer(loaded_model, reuse_prefix=False)
    scorer.decoder = TransformersDecoder(loaded_model.model)
    questions = mmlu_data.questions("world_religions", "test")[:2]
    requests = [{"prompt_format": prompt, "subject": q.subject, "question": q.question, "choices": q.choices,
                 "shots": mmlu_data.questions(q.subject, "dev")[:5], "key": q.answer} for q in questions]
    for fast, slow in zip(answer_questions(scorer, requests), [answer_question(reference, **r) for r in requests],
                          strict=True):
        assert fast["prediction"] == slow["prediction"]
        assert fast["probabilities"] == pytest.approx(slow["probabilities"], abs=1e-5)


def test_a_cached_prefix_holds_exactly_the_bytes_it_counts(loaded_model, mmlu_data):
    """The prefix cache is bounded by bytes, so an entry may not keep more memory alive than it counts."""
    scorer = Scorer(loaded_model)
    q = mmlu_data.questions("astronomy", "test")[0]
    answer_question(scorer, prompt_format=prompt, subject="astronomy", question=q.question, choices=q.choices,
                    shots=mmlu_data.questions("astronomy", "dev")[:5])
    (entry,) = scorer.prefixes.entries.values()
    held = sum(t.untyped_storage().nbytes() for pair in entry.layers for t in pair)
    heads, dim = loaded_model.model.config.num_key_value_heads, loaded_model.model.config.head_dim
    assert held == entry.nbytes == scorer.prefixes.nbytes
    assert held == 2 * len(entry.layers) * heads * len(entry.token_ids) * dim * 4  # float32 keys and values only
    assert not any(t.requires_grad for pair in entry.layers for t in pair)


def test_attention_with_its_log_sum_exp_is_the_same_on_the_cpu_kernel_and_written_out():
    """The lean decoder combines attention to the prefix and to a row's own tokens by their
    log-sum-exps: torch's CPU kernel on the CPU, the written-out arithmetic on other devices."""
    import torch
    import torch.nn.functional as F

    generator = torch.Generator().manual_seed(0)
    q, keys, values = (torch.randn(1, 3, n, 64, generator=generator) for n in (24, 40, 40))
    mask = torch.full((24, 40), float("-inf")).triu(17)  # query i sees keys 0 … 16 + i
    for given in (None, mask):
        kernel_out, kernel_lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, keys, values, attn_mask=given)
        out, lse = written_out_attention(q, keys, values, given)
        assert torch.allclose(out, kernel_out, atol=1e-5) and torch.allclose(lse, kernel_lse, atol=1e-5)
        assert torch.allclose(out, F.scaled_dot_product_attention(q, keys, values, attn_mask=given), atol=1e-5)
        scores = q @ keys.transpose(-1, -2) / 8 + (0 if given is None else given)
        assert torch.allclose(lse, torch.logsumexp(scores, dim=-1), atol=1e-5)
    # Two sets of keys combined by their log-sum-exps are attention to both at once.
    first, first_lse = written_out_attention(q, keys[:, :, :16], values[:, :, :16])
    second, second_lse = written_out_attention(q, keys[:, :, 16:], values[:, :, 16:], mask[:, 16:])
    both = torch.logaddexp(first_lse, second_lse)[..., None]
    combined = first * (first_lse[..., None] - both).exp() + second * (second_lse[..., None] - both).exp()
    assert torch.allclose(combined, F.scaled_dot_product_attention(q, keys, values, attn_mask=mask), atol=1e-5)


def test_the_lean_decoder_calls_its_hook_before_each_layer(loaded_model):
    """The model server looks at the machine's cores between layers (livescoring/core_share.py): a
    pass that began on two threads goes on one as soon as another process takes a core."""
    import torch

    decoder = loaded_model.decoder
    looked = []
    rows = [loaded_model.tokenizer("The capital of France is", add_special_tokens=False)["input_ids"]]
    decoder.between_layers = lambda: looked.append(torch.get_num_threads())
    try:
        with torch.inference_mode():
            decoder(rows, 0, reads=[(0, len(rows[0]) - 1)])
    finally:
        decoder.between_layers = None
    assert len(looked) == len(decoder.layers)
