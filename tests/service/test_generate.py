"""livescoring/generate.py: greedy generation, stopped at stop strings, the end of text or the cap.

A scripted model (it writes given tokens in order, whatever it reads) checks the stopping rules,
the held-back text and the one-at-a-time rule without the real model; marked model, the real
model's greedy text equals transformers' own greedy ``generate`` token for token, in float32.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.server.failures import service_failure
from livescoring import generate
from livescoring.scorer import PromptTooLong
from livescoring.worker import READY, QueueFull

EOS = 0
PIECES = {EOS: "", 1: "A", 2: " yes", 3: "</", 4: "s>", 5: " more", 6: "\n", 7: "x"}


class PieceTokenizer:
    """Each prompt word is one token; token ids decode to PIECES."""

    eos_token_id = EOS

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        import torch

        ids = [7] * len(text.split())
        return {"input_ids": torch.tensor([ids]) if return_tensors == "pt" else ids}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(PIECES[i] for i in ids)


class ScriptedModel:
    """Puts all the next-token probability on the script's next token: greedy decoding follows it."""

    def __init__(self, script):
        self.script = script

    def __call__(self, input_ids, use_cache=True, cache=None):
        import torch

        step = 0 if cache is None else cache + 1
        logits = torch.zeros(1, input_ids.shape[1], len(PIECES))
        logits[0, -1, self.script[step]] = 1.0
        return SimpleNamespace(logits=logits, cache=step)


def loaded(script, context_length=64):
    return SimpleNamespace(tokenizer=PieceTokenizer(), model=ScriptedModel(script), device="cpu",
                           context_length=context_length)


def run(script, max_new_tokens=10, stop=("</s>", "\n")):
    events = list(generate.stream_greedy(loaded(script), "a short prompt", max_new_tokens, stop))
    return [e["text"] for e in events if "text" in e], events[-1]


def test_a_stop_string_split_across_tokens_is_held_back_and_cut():
    pieces, done = run([1, 2, 3, 4, 5])
    assert "".join(pieces) == "A yes" and not any("<" in p for p in pieces)  # "</" was never sent
    assert (done["reason"], done["tokens"]) == ("stop", 4)


def test_the_earliest_stop_string_wins():
    pieces, done = run([7, 6, 1, 3, 4])
    assert ("".join(pieces), done["reason"], done["tokens"]) == ("x", "stop", 2)


def test_an_end_of_text_first_token_gives_no_text():
    pieces, done = run([EOS])
    assert (pieces, done["reason"], done["tokens"], done["prompt_tokens"]) == ([], "end of text", 0, 3)


def test_the_cap_stops_it():
    pieces, done = run([1, 2, 5, 5, 5, 5], max_new_tokens=3)
    assert ("".join(pieces), done["reason"], done["tokens"]) == ("A yes more", "length", 3)


def test_bounds_are_checked_before_the_model_runs():
    for bad in (0, generate.MAX_NEW_TOKENS + 1):
        with pytest.raises(ValueError, match="max_new_tokens"):
            next(generate.stream_greedy(loaded([1]), "prompt", bad))
    with pytest.raises(PromptTooLong, match="does not fit"):
        next(generate.stream_greedy(loaded([1], context_length=5), "three word prompt", 3))


class ReadyService:
    state, timeout_s, message = READY, 1.0, "ready"

    def __init__(self, script):
        self.scorer = SimpleNamespace(loaded=loaded(script))

    def start(self):
        pass

    def wait_ready(self, timeout):
        return True


def test_one_generation_at_a_time():
    service = ReadyService([1, 2, 5, 5, 5, 5])
    first = generate.generation(service, "a prompt", 4)
    with pytest.raises(QueueFull) as busy:
        generate.generation(service, "another prompt", 4)
    answer = service_failure(busy.value)  # what every page that generates answers with
    assert answer.status == 429 and answer.headers == {"Retry-After": "30"}
    assert answer.message == ("Another reader's answer is being written (this server writes one at a time); "
                              "try again in about 30 s.")
    assert "".join(e.get("text", "") for e in first) == "A yes more more"
    assert list(generate.generation(service, "a prompt", 1))[-1]["reason"] == "length"  # free again


@pytest.mark.model
def test_greedy_generation_equals_transformers_generate(loaded_model):
    import torch

    from benchmarks.mmlu import prompt
    from benchmarks.mmlu.server import data_dir
    from benchmarks.mmlu.server.reader import MMLUData
    from engine.config import default_config

    model = loaded_model
    assert model.dtype == "float32"
    q = MMLUData(data_dir(default_config())).question("astronomy", "test", 3)
    plain = prompt.build_prompt(q.subject, q.question, q.choices)
    chat = model.tokenizer.apply_chat_template([{"role": "user", "content": plain}], tokenize=False,
                                               add_generation_prompt=True)
    for text in (plain, chat):
        events = list(generate.stream_greedy(model, text, 16))
        ids = model.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            out = model.model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=16)
        new = [t for t in out[0, ids.shape[1]:].tolist() if t != model.tokenizer.eos_token_id]
        assert events[-1]["tokens"] == len(new)
        assert "".join(e.get("text", "") for e in events) == model.tokenizer.decode(new, skip_special_tokens=True)
