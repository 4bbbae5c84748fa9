"""livescoring/generate.py and ScoringService.generate_until: greedy generation, stopped at stop strings, the
end of text or the cap.

A scripted model (it writes given tokens in order, whatever it reads) checks the stopping rules,
the held-back text and the worker's generation lane (a client's share, fairness between clients,
cancellation, the stop signal) without the real model; marked model, the real
model's greedy text equals transformers' own greedy ``generate`` token for token, in float32.
"""
from __future__ import annotations

import collections
import threading
import time
from types import SimpleNamespace

import pytest

from benchmarks.server.failures import service_failure
from livescoring import generate, worker
from livescoring.model import ModelSettings
from livescoring.scorer import Generation, PromptTooLong, Scorer
from livescoring.worker import READY, ClientGone, Preempted, QueueFull, ScoringService, ScoringTimeout, ServerStopping

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

    def __call__(self, input_ids, use_cache=True, cache=None, **_options):
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


def test_the_first_event_says_how_long_the_prompt_is_before_the_model_reads_it():
    """What a page shows until the first token: the prompt's tokens, sent before the prompt's pass."""
    calls = []

    class Watched(ScriptedModel):
        def __call__(self, input_ids, **options):
            calls.append(input_ids.shape[1])
            return super().__call__(input_ids, **options)

    model = loaded([1, 2, EOS])
    model.model = Watched([1, 2, EOS])
    steps = generate.greedy_steps(model, model.tokenizer("a short prompt", return_tensors="pt")["input_ids"], 5)
    assert next(steps) == {"reading": {"prompt_tokens": 3, "cached_tokens": 0}} and calls == []
    events = [event for event in steps if event is not None]
    assert calls[0] == 3 and [e["tokens"] for e in events if "text" in e] == [1, 2]
    assert events[-1]["reason"] == "end of text"


def test_bounds_are_checked_before_the_model_runs():
    for bad in (0, generate.MAX_NEW_TOKENS + 1):
        with pytest.raises(ValueError, match="max_new_tokens"):
            next(generate.stream_greedy(loaded([1]), "prompt", bad))
    with pytest.raises(PromptTooLong, match="does not fit"):
        next(generate.stream_greedy(loaded([1], context_length=5), "three word prompt", 3))


class CountingModel(ScriptedModel):
    """Writes " more" for ever (until the cap), a little slowly, counting its forward passes."""

    def __init__(self, delay=0.005):
        super().__init__([5] * (generate.MAX_NEW_TOKENS + 1))
        self.calls, self.delay = 0, delay

    def __call__(self, input_ids, use_cache=True, cache=None, **_options):
        self.calls += 1
        time.sleep(self.delay)
        return super().__call__(input_ids, use_cache, cache)


def serving(model, **options) -> ScoringService:
    """A ready service whose worker runs ``model`` (scoring answers from a stand-in scorer)."""
    service = ScoringService(ModelSettings(), **{"timeout_s": 10.0, **options})
    service.scorer = Scorer(SimpleNamespace(tokenizer=PieceTokenizer(), model=model, device="cpu", context_length=4096),
                            decoder=object())
    service.scorer.loglikelihood = lambda requests, stop=None: [{"n": n} for n in requests]
    service.state = READY
    service._ready.set()
    threading.Thread(target=service._serve, daemon=True).start()
    return service


def writing(service, prompt: str, tokens: int, **caller):
    """``prompt``'s generation of up to ``tokens`` tokens in the service's lane (``caller``: client, gone)."""
    return service.generate_until(Generation(prompt, max_gen_toks=tokens), **caller)


def wait_until(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def idle(service) -> bool:
    return not service.generating and not service.waiting and not service._per_client


def test_a_generation_streams_from_the_worker_and_frees_its_place():
    service = serving(ScriptedModel([1, 2, 5, 5, 5, 5]))
    events = list(writing(service, "a prompt", 4, client="reader"))
    assert "".join(e.get("text", "") for e in events) == "A yes more more"
    assert events[-1]["reason"] == "length" and events[-1]["tokens"] == 4
    wait_until(lambda: idle(service))


def test_one_clients_share_is_refused_with_its_own_words():
    service = serving(CountingModel())
    first = writing(service, "a prompt", 500, client="hog")
    waiting = threading.Thread(target=lambda: list(writing(service, "a prompt", 2, client="hog")))
    waiting.start()  # the hog's second answer waits for its first (one at a time per client)
    wait_until(lambda: len(service.waiting) == 1)
    with pytest.raises(QueueFull) as busy:
        writing(service, "another prompt", 4, client="hog")
    answer = service_failure(busy.value)  # what every page that generates answers with
    assert answer.status == 429 and int(answer.headers["Retry-After"]) >= 1
    assert answer.message.startswith("You already have 2 answers being written or waiting; try again in about")
    first.close()
    waiting.join(5)
    wait_until(lambda: idle(service))


@pytest.mark.slow  # timed generations side by side
def test_another_client_is_served_while_one_client_holds_generation():
    """Finding 3 of issue 26: one address sending long generations back to back kept every other
    address at 429. Now the other reader's answer runs beside the hog's, and the hog's next one waits."""
    model = CountingModel()
    service = serving(model)
    hog = writing(service, "a prompt", 500, client="192.0.2.1")
    hog_next = []
    threading.Thread(target=lambda: hog_next.append(list(writing(service, "p", 3, client="192.0.2.1"))),
                     daemon=True).start()
    wait_until(lambda: len(service.waiting) == 1)
    started = time.monotonic()
    other = list(writing(service, "a prompt", 3, client="192.0.2.2"))
    assert other[-1]["tokens"] == 3 and time.monotonic() - started < 2  # not behind the hog's 500 tokens
    assert not hog_next  # the hog's second waits for its first
    assert len(list(hog)) > 0
    wait_until(lambda: hog_next and idle(service))


@pytest.mark.slow  # two long generations stepped side by side while a reader asks twice: 1 s (3 s importing torch)
def test_two_clients_re_posting_long_generations_do_not_keep_a_third_reader_out(monkeypatch):
    """Issue 41, item 3, as the attack ran it: two addresses each re-posting a 512-token generation
    as soon as the last ended held both places, and a third reader's two answers waited out the
    timeout (2 x 504). Now a reader kept waiting stops the longest-running of them, and gets both."""
    monkeypatch.setattr(worker, "PREEMPT_AFTER_S", 0.3)
    service = serving(CountingModel(), timeout_s=3.0)  # a 512-token answer beside another: about 5 s here
    stop, outcomes = threading.Event(), collections.Counter()

    def attack(address):
        while not stop.is_set():
            try:
                stream = writing(service, "a long prompt", generate.MAX_NEW_TOKENS, client=address)
                for _event in stream:
                    if stop.is_set():
                        stream.close()
                outcomes["finished"] += 1
            except Preempted:
                outcomes["preempted"] += 1
            except (QueueFull, ScoringTimeout):
                outcomes["refused"] += 1
                time.sleep(0.05)

    attackers = [threading.Thread(target=attack, args=(address,)) for address in ("192.0.2.1", "192.0.2.2")]
    for thread in attackers:
        thread.start()
    try:
        for _ in range(2):
            wait_until(lambda: len(service.generating) == 2 and not service.waiting)  # both places held again
            answer = list(writing(service, "a question", 3, client="192.0.2.3"))
            assert answer[-1]["tokens"] == 3 and answer[-1]["reason"] == "length"
    finally:
        stop.set()
        for thread in attackers:
            thread.join(10)
    assert outcomes["preempted"] == 2 and outcomes["finished"] <= 2  # each answer cost an attacker's stream
    wait_until(lambda: idle(service))


def test_a_waiting_reader_stops_the_longest_running_generation_between_tokens(monkeypatch):
    """The reader kept waiting with every place taken stops the generation that has run longest: its
    stream ends, after whole text events, with Preempted, whose words say it was stopped to let
    another reader in; the other generation runs on and the reader is answered."""
    monkeypatch.setattr(worker, "PREEMPT_AFTER_S", 0.2)
    service = serving(CountingModel())
    oldest = writing(service, "a prompt", 500, client="198.51.100.1")
    next(oldest)
    other = writing(service, "a prompt", 500, client="198.51.100.2")
    answers = []
    reader = threading.Thread(target=lambda: answers.append(list(writing(service, "p", 3, client="198.51.100.3"))))
    reader.start()
    text, tokens = "", 0
    with pytest.raises(Preempted, match="Another reader was waiting .* stopped to let them in") as stopped:
        for event in oldest:
            text, tokens = text + event.get("text", ""), event.get("tokens", tokens)
    assert tokens > 0 and text == " more" * tokens  # whole tokens, then the closing event
    assert stopped.value.retry_after >= 1
    answer = service_failure(stopped.value)  # a page without JavaScript (it reads the whole answer)
    assert answer.status == 503 and answer.headers["Retry-After"] == str(stopped.value.retry_after)
    reader.join(5)
    assert answers and answers[0][-1]["tokens"] == 3
    assert [job.client for job in service.generating] == ["198.51.100.2"]  # the younger one runs on
    other.close()
    wait_until(lambda: idle(service))


def test_a_client_past_its_share_goes_behind_others_and_is_refused_while_they_wait(monkeypatch):
    """A client that has had more than GENERATION_SHARE_S of generation in the window waits behind
    the clients within their share, and while another's generation waits it is refused (429), with
    Retry-After saying when its counted time is back within its share."""
    monkeypatch.setattr(worker, "GENERATION_SHARE_S", 0.05)
    service = serving(CountingModel())
    assert list(writing(service, "a prompt", 40, client="hog"))[-1]["tokens"] == 40  # about 0.2 s of generation
    running = [writing(service, "a prompt", 500, client=c) for c in ("x", "y")]  # every place taken
    queued = {}

    def ask(client):
        queued[client] = writing(service, "p", 3, client=client)
    waiting = [threading.Thread(target=ask, args=(client,)) for client in ("hog", "reader")]
    waiting[0].start()  # the hog asks first
    wait_until(lambda: len(service.waiting) == 1)
    waiting[1].start()
    wait_until(lambda: len(service.waiting) == 2)
    with pytest.raises(QueueFull, match=r"held the model for 0 s in the last 5 minutes, more than one reader's share") \
            as refused:
        writing(service, "p", 3, client="hog")  # its second ask, while the reader waits
    assert worker.GENERATION_WINDOW_S - 10 <= refused.value.retry_after <= worker.GENERATION_WINDOW_S
    assert service_failure(refused.value).status == 429
    running[0].close()  # a place frees: the reader takes it, though the hog asked first
    waiting[1].join(5)
    assert "reader" in queued and [job.client for job in service.waiting] == ["hog"]
    running[1].close()
    waiting[0].join(5)
    assert list(queued["hog"])[-1]["tokens"] == 3  # with nobody else waiting, its turn comes
    wait_until(lambda: idle(service))


def test_a_stream_dropped_unread_stops_its_generation():
    """Finding 1 of issue 26: a response closed before its first item was written never ran the
    stream's ``finally``, and generation stayed locked until restart. Dropping the stream unread (or
    closing it) now stops the generation between tokens and frees its place."""
    model = CountingModel()
    service = serving(model)
    stream = writing(service, "a prompt", 500, client="reader")

    def unstarted(events):  # what a route's body generator holds; closed before it ever ran
        yield from events

    body = unstarted(stream)
    del stream
    body.close()
    del body
    wait_until(lambda: idle(service))
    assert model.calls < 100
    calls = model.calls
    assert list(writing(service, "again", 2, client="reader"))[-1]["tokens"] == 2
    assert model.calls == calls + 2


def test_a_client_that_leaves_stops_its_generation_between_tokens():
    model = CountingModel()
    service = serving(model)
    left = threading.Event()
    stream = writing(service, "a prompt", 500, client="reader", gone=left.is_set)
    next(stream)
    left.set()
    wait_until(lambda: idle(service))
    assert model.calls < 100
    with pytest.raises(ClientGone):
        list(stream)


def test_a_client_that_leaves_while_queued_leaves_the_queue():
    service = serving(CountingModel())
    running = [writing(service, "a prompt", 500, client=c) for c in ("a", "b")]  # every place taken
    left = threading.Event()
    failures = []

    def wait():
        try:
            writing(service, "p", 3, client="c", gone=left.is_set)
        except ClientGone as error:
            failures.append(error)
    thread = threading.Thread(target=wait)
    thread.start()
    wait_until(lambda: len(service.waiting) == 1)
    left.set()
    thread.join(5)
    assert failures and not service.waiting
    for stream in running:
        stream.close()
    wait_until(lambda: idle(service))


def test_scoring_is_not_held_behind_a_generation():
    service = serving(CountingModel())
    stream = writing(service, "a prompt", 500, client="writer")
    started = time.monotonic()
    assert service.loglikelihood([7], client="scorer") == [{"n": 7}]
    assert time.monotonic() - started < 1 and service.generating  # the generation is still running
    stream.close()
    wait_until(lambda: idle(service))


def test_a_stop_signal_ends_a_long_generation_saying_why():
    """Finding 10 of issue 26: a stream longer than the shutdown grace was cut with no closing line."""
    service = serving(CountingModel(delay=0.01))
    stream = writing(service, "a prompt", 500, client="reader")
    next(stream)
    service.stop_by(time.monotonic() + 0.2)
    with pytest.raises(ServerStopping, match="shutting down"):
        list(stream)
    wait_until(lambda: idle(service))
    with pytest.raises(ServerStopping):
        writing(service, "a prompt", 5, client="late")
    assert service_failure(ServerStopping("x")).status in (503, 504)


def test_a_stream_that_ends_before_the_stop_deadline_finishes():
    service = serving(CountingModel())
    stream = writing(service, "a prompt", 20, client="reader")
    service.stop_by(time.monotonic() + 30)
    assert list(stream)[-1]["reason"] == "length"


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


@pytest.mark.parametrize("script", [[1, 2, 3, 4, 5], [7, 6, 1], [EOS], [1, 2, 5, 5, 5, 5]])
def test_the_batch_scorer_and_the_stream_write_the_same_greedy_text(script):
    """One greedy loop (livescoring/greedy.py) under both: the batch command's generate_until (its
    reference path here) and the streamed generation stop at the same token for the same reason."""
    pieces, done = run(script, max_new_tokens=3)
    reference = Scorer(loaded(script), reuse_prefix=False, decoder="unused: the reference path runs the model itself")
    (answer,) = reference.generate_until(
        [Generation("a short prompt", until=("</s>", "\n"), max_gen_toks=3)])
    assert (answer.text, answer.stopped, len(answer.tokens)) == ("".join(pieces), done["reason"], done["tokens"])
