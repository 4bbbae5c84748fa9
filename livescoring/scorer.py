"""Score multiple-choice questions with a causal LM, the way the reference evaluation does, fast.

The scorer knows no dataset: a question comes with its options (K of them, lettered A, B, …) and a
prompt format, any object with ``prompt_parts(subject, question, choices, shots)`` returning parts
with ``kind`` and ``text`` (a benchmark's prompt module, benchmarks/<name>/prompt.py). Two methods:

* ``letter`` (the reference method: lm-evaluation-harness's default multiple-choice task for the
  benchmark, one float32 forward pass, log-softmax at the last position): after the prompt ending
  in "Answer:", compare the log-probabilities of the continuations " A", " B", … (a letter that is
  several tokens gets the sum of its tokens' log-probabilities); the softmax over the K letters is
  the letter distribution and its argmax the prediction.
* ``option`` (full-option log-likelihood): the continuation is the option's own text, " {choice}",
  scored as the sum of its tokens' log-probabilities (explainers.option_logprob); the best one is
  picked with explainers.pick_option.

A request's ``delimiter`` (default " ") is what comes between the prompt and the letter or option
text, the harness's target delimiter; after a chat template the harness uses none.

Tokenisation follows the harness: a context and a continuation are encoded as
``context_ids = encode(context)`` and ``continuation_ids = encode(context + continuation)[len(context_ids):]``,
with no special tokens. When a few-shot prompt does not fit the model's context, whole worked
examples are dropped (the original code lowered k until the prompt fit) and the result says so.

Speed without changing a number (see the README, "Live scoring"):

* **Prefix reuse.** Every question of a subject shares the header and the worked examples. Their
  key/value cache is computed once and kept (an LRU bounded by bytes); a question then runs only
  its own tokens on top. The split is made on tokens, not text: the whole prompt is tokenised as
  always and the longest common token prefix with the cached one is reused, so tokenisation never
  changes (BPE may merge across the text boundary; those tokens are simply recomputed).
* **Batching.** Questions that share a cached prefix run in one forward pass: each question's own
  tokens on top of the prefix (livescoring/decoder.py packs them one after another, with no
  padding). The language-model head (49,152 × 576 in SmolLM2) runs only at the positions whose
  log-probabilities are read, not at every prompt position, and once for the whole batch.

``Scorer(loaded, reuse_prefix=False)`` is the reference path instead: each question alone, one
forward pass over its whole prompt with logits at every position, as the harness runs it. The tests
and bench/ compare the two.
"""
from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import explainers

from .decoder import decoder_for

METHODS = ("letter", "option")
GENERATIVE = "generative"  # greedy generation; the caller reads the answer from the text (its benchmark's filter)
GENERATE_MAX_NEW_TOKENS = 256  # lm-evaluation-harness's max_gen_toks for Hugging Face models
TOP_NEXT_TOKENS = 5
LETTERS = "ABCDEFGHIJ"  # up to ten options
SHARED_PART_KINDS = ("header", "shot")  # leading prompt parts every question of a subject and k shares
PREFIX_CACHE_BYTES = 256 * 2**20  # SmolLM2-135M holds 46 KiB of keys and values per token in float32
BATCH_ROWS = 8  # rows per forward pass; bench/scoring.py measures the choice
# Tokens one packed forward pass may run in the server (ScoringService; a row longer than this runs
# alone). A pass's activations grow with its tokens (at float32, about 40 KiB per token at once in
# SmolLM2's widest layer, the MLP): eight rows of a long 5-shot question's own ~800 tokens made passes
# of 6,400 tokens (issue 26's memory). Short questions still fill BATCH_ROWS rows. Which rows share a
# pass moves a probability by float rounding only (as the server's micro-batches already do, within
# 1e-5 of the reference), so Scorer's own default is no bound: the batch command's rows are unchanged.
# A bounded scorer also gives its freed memory back after a call that ran that many tokens or more.
PASS_TOKENS = 2048


class PromptTooLong(ValueError):
    """Even with no worked examples the question does not fit the model's context."""


class ScoringCancelled(RuntimeError):
    """Every caller of a batch gave up; the batch stopped between forward passes."""


@dataclass(frozen=True)
class ScoredContinuation:
    letter: str
    text: str  # the continuation scored after the prompt: " A" or " {choice}" (no space after a chat template)
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]

    @property
    def logprob(self) -> float:
        return explainers.option_logprob(list(self.token_logprobs))


@dataclass
class _Prepared:
    """One question after prompt building and tokenisation, before the model runs."""

    request: dict
    letters: str
    texts: list[str]
    parts: list
    shared_text: str
    context_ids: list[int]
    continuation_ids: list[list[int]]
    started: float
    token_logprobs: list[list[float]] = field(default_factory=list)
    next_logprobs: object = None  # log-softmax over the vocabulary after the whole context


@dataclass(frozen=True)
class _Row:
    """One sequence of the forward pass and the positions whose next-token log-probabilities are read.

    ``reads`` pairs a position of ``tokens`` with the token whose log-probability is wanted there
    (None: keep the whole distribution, for the position right after the context)."""

    question: int
    continuation: int | None  # None: the context's own row
    tokens: tuple[int, ...]
    reads: tuple[tuple[int, int | None], ...]


@dataclass
class _Prefix:
    token_ids: tuple[int, ...]
    layers: list  # per layer (keys, values), each [1, heads, tokens, head_dim]
    nbytes: int


class PrefixCache:
    """Key/value caches of shared prompt prefixes, least recently used first out, bounded by bytes."""

    def __init__(self, max_bytes: int = PREFIX_CACHE_BYTES):
        self.max_bytes = max_bytes
        self.entries: OrderedDict[str, _Prefix] = OrderedDict()
        self.nbytes = 0

    def get(self, text: str) -> _Prefix | None:
        entry = self.entries.get(text)
        if entry is not None:
            self.entries.move_to_end(text)
        return entry

    def put(self, text: str, entry: _Prefix) -> None:
        if entry.nbytes > self.max_bytes:
            return
        old = self.entries.pop(text, None)
        if old is not None:
            self.nbytes -= old.nbytes
        self.entries[text] = entry
        self.nbytes += entry.nbytes
        while self.nbytes > self.max_bytes:
            _, evicted = self.entries.popitem(last=False)
            self.nbytes -= evicted.nbytes


def return_freed_memory() -> None:
    """Give the heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing).

    A long pass frees hundreds of MiB of activations in pieces glibc keeps for reuse; without this the
    server stays at its highest point (issue 26). Called after passes that ran many tokens, where it
    costs milliseconds against seconds."""
    global _malloc_trim
    if _malloc_trim is None:
        import ctypes
        import ctypes.util

        try:
            _malloc_trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def _owning(tensor):
    """``tensor`` if it is contiguous and owns exactly its storage, else a contiguous copy that does."""
    import torch

    if (tensor.is_contiguous() and tensor.storage_offset() == 0
            and tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size()):
        return tensor
    return tensor.clone(memory_format=torch.contiguous_format)


def common_prefix_length(a, b) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class Scorer:
    """Holds a loaded model; every call is pure inference under torch.inference_mode()."""

    def __init__(self, loaded, reuse_prefix: bool = True, batch_rows: int = BATCH_ROWS,
                 prefix_cache_bytes: int = PREFIX_CACHE_BYTES, decoder=None, pass_tokens: int = 0):
        self.loaded = loaded
        self.reuse_prefix = reuse_prefix
        self.batch_rows = max(1, batch_rows)
        self.pass_tokens = max(0, pass_tokens)  # 0: no bound but batch_rows
        self.prefixes = PrefixCache(prefix_cache_bytes)
        self.decoder = decoder or decoder_for(loaded.model)  # read-only: scorers on one model may share it

    # -- tokenisation -------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return list(self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode_pairs(self, context: str, continuations: list[str]) -> tuple[list[int], list[list[int]]]:
        """The harness's split of context and continuation, for each continuation after one context:
        trailing spaces of the context move to the continuation; the context is encoded once, and
        with every continuation, in one call of the tokenizer."""
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuations = context[:-spaces], [context[-spaces:] + c for c in continuations]
        context_ids, *wholes = self.loaded.tokenizer([context] + [context + c for c in continuations],
                                                     add_special_tokens=False)["input_ids"]
        return list(context_ids), [list(whole[len(context_ids):]) for whole in wholes]

    # -- prompts ------------------------------------------------------------------------------
    @staticmethod
    def letters(choices) -> str:
        if not 2 <= len(choices) <= len(LETTERS):
            raise ValueError(f"a question needs 2 to {len(LETTERS)} options, got {len(choices)}")
        return LETTERS[:len(choices)]

    @classmethod
    def continuation_texts(cls, method: str, choices, delimiter: str = " ") -> list[str]:
        """What is scored after the prompt: the delimiter, then the letter or the option's text.

        The delimiter is the harness's target_delimiter: a space after "Answer:", and nothing after
        a chat template's assistant header (the template ends its header with a line break)."""
        if method == "letter":
            return [f"{delimiter}{letter}" for letter in cls.letters(choices)]
        return [f"{delimiter}{choice}" for choice in choices]

    def fit_prompt(self, prompt_format, subject: str, question: str, choices, shots, continuations: list[str]):
        """Build the prompt with as many of the requested shots as fit the model's context.

        Returns (parts, context_ids, continuation_ids). Shots are dropped from the end of the list
        (keeping the first k − 1 dev examples, as the original code did by lowering k).
        """
        limit = self.loaded.context_length
        for k in range(len(shots), -1, -1):
            parts = prompt_format.prompt_parts(subject, question, choices, shots[:k])
            text = "".join(p.text for p in parts)
            context_ids, continuation_ids = self.encode_pairs(text, continuations)
            if len(context_ids) + max(map(len, continuation_ids)) <= limit:
                return parts, context_ids, continuation_ids
        raise PromptTooLong(
            f"the question and its choices take more than the model's context of {limit} tokens even with no "
            "worked examples; shorten them"
        )

    def _prepare(self, request: dict) -> _Prepared:
        method = request.get("method", "letter")
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}")
        started = time.perf_counter()
        choices = request["choices"]
        texts = self.continuation_texts(method, choices, request.get("delimiter", " "))
        letters = self.letters(choices)
        parts, context_ids, continuation_ids = self.fit_prompt(
            request["prompt_format"], request["subject"], request["question"], choices,
            list(request.get("shots", ())), texts)
        shared = []
        for part in parts:
            if part.kind not in SHARED_PART_KINDS:
                break
            shared.append(part.text)
        return _Prepared(request, letters, texts, parts, "".join(shared), context_ids, continuation_ids, started)

    @staticmethod
    def _rows(index: int, prepared: _Prepared) -> list[_Row]:
        """The context's row (reading the whole next-token distribution) and one row per continuation
        of several tokens (reading each of its later tokens after the ones before it)."""
        ctx = prepared.context_ids
        rows = [_Row(index, None, tuple(ctx), ((len(ctx) - 1, None),))]
        for c, cont in enumerate(prepared.continuation_ids):
            if len(cont) > 1:
                reads = tuple((len(ctx) - 1 + i, token) for i, token in enumerate(cont[1:], start=1))
                rows.append(_Row(index, c, tuple(ctx) + tuple(cont[:-1]), reads))
        return rows

    # -- the model ----------------------------------------------------------------------------
    def _prefix(self, text: str) -> _Prefix | None:
        """The cached key/value states of a shared prefix, computed on first use."""
        import torch

        if not text:
            return None
        entry = self.prefixes.get(text)
        if entry is not None:
            return entry
        ids = self.encode(text)
        if not ids:
            return None
        with torch.inference_mode():
            _, layers = self.decoder([ids], 0)
        # Tensors that own exactly their memory: a view would keep the whole pass's projection alive,
        # uncounted (the lean decoder already returns such tensors; transformers' returns views).
        layers = [(_owning(k), _owning(v)) for k, v in layers]
        nbytes = sum(k.untyped_storage().nbytes() + v.untyped_storage().nbytes() for k, v in layers)
        entry = _Prefix(tuple(ids), layers, nbytes)
        self.prefixes.put(text, entry)
        return entry

    def _forward(self, rows: list[_Row], prefix: _Prefix | None) -> list[list]:
        """One forward pass over ``rows`` (all sharing ``prefix``); per row, the values it reads:
        a float log-probability, or the whole log-softmax vector where the token is None."""
        import torch

        reused = 0
        if prefix is not None:
            # At least the last context token must run, so its hidden state exists.
            reused = min(min(common_prefix_length(prefix.token_ids, r.tokens) for r in rows),
                         min(r.reads[0][0] for r in rows))
        reads = [(i, pos - reused) for i, r in enumerate(rows) for pos, _ in r.reads]
        hidden, _ = self.decoder([r.tokens[reused:] for r in rows], reused, prefix.layers if reused else None, reads,
                                 keep=False)
        logprobs = torch.log_softmax(self.loaded.model.lm_head(hidden).float(), dim=-1)
        values, n = [], 0
        for r in rows:
            got = []
            for _, token in r.reads:
                got.append(logprobs[n] if token is None else logprobs[n, token].item())
                n += 1
            values.append(got)
        return values

    def _forward_full(self, row: _Row) -> list:
        """The reference: one sequence, no cache, logits at every position, log-softmax, read."""
        import torch

        model, device = self.loaded.model, self.loaded.device
        logits = model(torch.tensor([row.tokens], device=device)).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return [logprobs[pos] if token is None else logprobs[pos, token].item() for pos, token in row.reads]

    def batches(self, rows: list[_Row], reused: int) -> list[list[_Row]]:
        """``rows`` in order, cut into forward passes of at most ``batch_rows`` rows and (where
        ``pass_tokens`` is set) at most that many tokens run (each row's tokens after the ``reused``
        prefix; a longer row alone)."""
        batches: list[list[_Row]] = []
        tokens = 0
        for row in rows:
            own = max(1, len(row.tokens) - reused)
            if (batches and len(batches[-1]) < self.batch_rows
                    and (not self.pass_tokens or tokens + own <= self.pass_tokens)):
                batches[-1].append(row)
                tokens += own
            else:
                batches.append([row])
                tokens = own
        return batches

    def _run(self, prepared: list[_Prepared], stop: Callable[[], bool] | None) -> None:
        """Fill each question's token log-probabilities, batching rows that share a prefix."""
        import torch

        groups: dict[str, list[_Row]] = {}
        for index, p in enumerate(prepared):
            for row in self._rows(index, p):
                groups.setdefault(p.shared_text if self.reuse_prefix else "", []).append(row)
        results: dict[tuple[int, int | None], list] = {}
        ran = 0  # tokens through the model in this call
        with torch.inference_mode():
            for shared_text, rows in groups.items():
                if self.reuse_prefix:
                    fresh = shared_text not in self.prefixes.entries
                    prefix = self._prefix(shared_text)
                    reused = len(prefix.token_ids) if prefix is not None else 0
                    ran += reused if fresh else 0
                    rows = sorted(rows, key=lambda r: len(r.tokens))  # neighbours in length pad little
                    batches = self.batches(rows, reused)
                else:
                    reused, batches = 0, [[row] for row in rows]
                for batch in batches:
                    if stop is not None and stop():
                        raise ScoringCancelled("every caller of this batch gave up waiting")
                    values = self._forward(batch, prefix) if self.reuse_prefix else [self._forward_full(batch[0])]
                    ran += sum(max(1, len(row.tokens) - reused) for row in batch)
                    for row, got in zip(batch, values, strict=True):
                        results[(row.question, row.continuation)] = got
        if self.pass_tokens and ran >= self.pass_tokens:  # the server's scorer: back to its resting size
            return_freed_memory()
        for index, p in enumerate(prepared):
            (p.next_logprobs,) = results[(index, None)]
            p.token_logprobs = [
                [p.next_logprobs[cont[0]].item()] + (results[(index, c)] if len(cont) > 1 else [])
                for c, cont in enumerate(p.continuation_ids)
            ]

    # -- questions ----------------------------------------------------------------------------
    def score(self, prompt_format, subject: str, question: str, choices, shots: list | tuple = (),
              method: str = "letter", key: str | None = None, delimiter: str = " ") -> dict:
        """Score one question; the result is plain JSON-ready data (see the README for fields)."""
        (result,) = self.score_many([{"prompt_format": prompt_format, "subject": subject, "question": question,
                                      "choices": choices, "shots": shots, "method": method, "key": key,
                                      "delimiter": delimiter}])
        return result

    def score_many(self, requests: list[dict], stop: Callable[[], bool] | None = None) -> list[dict]:
        """Score several questions (dicts of :meth:`score`'s arguments) together; each result is
        what :meth:`score` returns for it alone. ``stop`` is asked between forward passes."""
        generations = [r for r in requests if r.get("method") == GENERATIVE]
        prepared = [self._prepare(r) for r in requests if r.get("method") != GENERATIVE]
        self._run(prepared, stop)
        scored = iter([self._result(p) for p in prepared])
        generated = iter(self._generate_many(generations, stop) if generations else [])
        return [next(generated) if r.get("method") == GENERATIVE else next(scored) for r in requests]

    # -- generation ---------------------------------------------------------------------------
    def fit_generation(self, prompt_format, subject: str, question: str, choices, shots, max_new_tokens: int):
        """The prompt with as many of the requested shots as leave room for ``max_new_tokens``
        (dropped from the end, as :meth:`fit_prompt` does): (parts, token ids)."""
        limit = self.loaded.context_length
        for k in range(len(shots), -1, -1):
            parts = prompt_format.prompt_parts(subject, question, choices, shots[:k])
            ids = self.encode("".join(p.text for p in parts))
            if len(ids) + max_new_tokens <= limit:
                return parts, ids
        raise PromptTooLong(f"the question and its choices with {max_new_tokens} new tokens take more than the "
                            f"model's context of {limit} tokens even with no worked examples; shorten them")

    def _generate_many(self, requests: list[dict], stop: Callable[[], bool] | None = None) -> list[dict]:
        """Greedy generation after each prompt, as lm-evaluation-harness's ``generate_until`` runs it
        on a Hugging Face model (greedy, one sequence at a time): stop at the model's end-of-text
        token, at the first of the request's ``until`` strings (the text is cut there), or after
        ``max_new_tokens``.

        The fast path reuses the shared prefix's cached keys and values (the header and worked
        examples, as scoring does): the prompts that share one run their own tokens packed in one
        pass (``batch_rows`` to a pass, livescoring/decoder.py), then each question one token per
        pass on top of its own growing cache. The reference path (``reuse_prefix=False``) is
        transformers' own forward with its cache, over each whole prompt."""
        import torch

        started = time.perf_counter()
        jobs = []
        for request in requests:
            max_new = int(request.get("max_new_tokens", GENERATE_MAX_NEW_TOKENS))
            parts, ids = self.fit_generation(request["prompt_format"], request["subject"], request["question"],
                                             request["choices"], list(request.get("shots", ())), max_new)
            shared = "".join(p.text for p in parts[:next((i for i, p in enumerate(parts)
                                                           if p.kind not in SHARED_PART_KINDS), len(parts))])
            jobs.append({"request": request, "parts": parts, "ids": ids, "shared": shared, "max_new": max_new})
        with torch.inference_mode():
            if self.reuse_prefix:
                groups: dict[str, list[dict]] = {}
                for job in jobs:
                    groups.setdefault(job["shared"], []).append(job)
                for shared, members in groups.items():
                    prefix = self._prefix(shared)
                    members = sorted(members, key=lambda j: len(j["ids"]))
                    for start in range(0, len(members), self.batch_rows):
                        if stop is not None and stop():
                            raise ScoringCancelled("every caller of this batch gave up waiting")
                        self._first_pass(members[start:start + self.batch_rows], prefix)
            for job in jobs:
                job.update(self._decode(job, stop))
        return [self._generation_result(job, started) for job in jobs]

    def _first_pass(self, jobs: list[dict], prefix: _Prefix | None) -> None:
        """The prompts' own tokens in one packed pass over the shared prefix: each job's logits after
        its prompt and its keys and values (the prefix's first tokens, then its own)."""
        reused = min(min(common_prefix_length(prefix.token_ids, j["ids"]), len(j["ids"]) - 1)
                     for j in jobs) if prefix else 0
        rows = [j["ids"][reused:] for j in jobs]
        hidden, own = self.decoder(rows, reused, prefix.layers if reused else None,
                                   [(r, len(row) - 1) for r, row in enumerate(rows)])
        logits = self.loaded.model.lm_head(hidden)
        offsets = [0]
        for row in rows:
            offsets.append(offsets[-1] + len(row))
        for r, job in enumerate(jobs):
            def mine(tensor, r=r):
                # LlamaDecoder packs the rows' tokens one after another; transformers' pads each row.
                if len(rows) > 1 and tensor.shape[0] == len(rows):
                    return tensor[r:r + 1, :, :len(rows[r])]
                return tensor[:, :, offsets[r]:offsets[r + 1]]
            job["logits"] = logits[r]
            # Its own keys and values (views into the pass's) and the prefix's: joined only if it
            # writes a token (most of a small model's multiple-choice answers end the text at once).
            job["past"] = ([(pk[:, :, :reused], pv[:, :, :reused]) for pk, pv in prefix.layers] if reused else None,
                           [(mine(k), mine(v)) for k, v in own])

    def prefilled(self, ids: list[int], shared: str):
        """A streamed generation's first pass (livescoring/generate.py): the prompt's own tokens on top
        of the cached keys and values of its ``shared`` leading text (the header and worked examples,
        computed on first use and kept, as for scoring). Returns (the logits after the prompt, the
        prompt's keys and values per layer). Call under ``torch.inference_mode()``."""
        import torch

        prefix = self._prefix(shared)
        reused = min(common_prefix_length(prefix.token_ids, ids), len(ids) - 1) if prefix else 0
        hidden, own = self.decoder([ids[reused:]], reused, prefix.layers if reused else None,
                                   [(0, len(ids) - reused - 1)])
        past = own if not reused else [(torch.cat([pk[:, :, :reused], k], dim=2), torch.cat([pv[:, :, :reused], v], dim=2))
                                       for (pk, pv), (k, v) in zip(prefix.layers, own, strict=True)]
        return self.loaded.model.lm_head(hidden)[0], past

    def extended(self, token: int, past: list):
        """One more token on a generation's keys and values: (the logits after it, the longer cache)."""
        import torch

        hidden, new = self.decoder([[token]], past[0][0].shape[2], past, [(0, 0)])
        past = [(torch.cat([k0, k], dim=2), torch.cat([v0, v], dim=2)) for (k0, v0), (k, v) in zip(past, new, strict=True)]
        return self.loaded.model.lm_head(hidden)[0], past

    def _decode(self, job: dict, stop: Callable[[], bool] | None) -> dict:
        """One question's greedy tokens from its first logits (the fast path's, or the reference
        path's own forward over the whole prompt), a pass per new token."""
        import torch

        tokenizer, model, device = self.loaded.tokenizer, self.loaded.model, self.loaded.device
        until = tuple(s for s in job["request"].get("until", ()) if s)
        state = {}
        if self.reuse_prefix:
            logits, state["parts"] = job.pop("logits"), job.pop("past")  # joined on the first new token

            def logits_after(token: int):
                if "parts" in state:
                    before, own = state.pop("parts")
                    state["past"] = own if before is None else [
                        (torch.cat([k0, k], dim=2), torch.cat([v0, v], dim=2))
                        for (k0, v0), (k, v) in zip(before, own, strict=True)]
                past = state["past"]
                hidden, new = self.decoder([[token]], past[0][0].shape[2], past, [(0, 0)])
                state["past"] = [(torch.cat([k0, k], dim=2), torch.cat([v0, v], dim=2))
                                 for (k0, v0), (k, v) in zip(past, new, strict=True)]
                return model.lm_head(hidden)[0]
        else:
            state["out"] = model(input_ids=torch.tensor([job["ids"]], device=device), use_cache=True, logits_to_keep=1)
            logits = state["out"].logits[0, -1]

            def logits_after(token: int):
                state["out"] = model(input_ids=torch.tensor([[token]], device=device), cache=state["out"].cache,
                                     use_cache=True)
                return state["out"].logits[0, -1]
        written: list[int] = []
        text, reason = "", "length"
        while len(written) < job["max_new"]:
            if stop is not None and stop():
                raise ScoringCancelled("every caller of this batch gave up waiting")
            token = int(logits.argmax())
            if token == tokenizer.eos_token_id:
                reason = "end of text"
                break
            written.append(token)
            text = tokenizer.decode(written, skip_special_tokens=True)
            cut = min((text.find(s) for s in until if s in text), default=-1)
            if cut >= 0:
                text, reason = text[:cut], "stop"
                break
            if len(written) < job["max_new"]:
                logits = logits_after(token)
        state.clear()  # the question's key/value cache goes now
        return {"written": written, "text": text, "reason": reason}

    def _generation_result(self, job: dict, started: float) -> dict:
        request, parts = job["request"], job["parts"]
        return {
            "method": GENERATIVE,
            "model": {"name": self.loaded.name, "device": self.loaded.device, "dtype": self.loaded.dtype,
                      "threads": self.loaded.threads, "context_length": self.loaded.context_length},
            "subject": request["subject"],
            "shots_requested": len(request.get("shots", ())),
            "shots_used": sum(1 for part in parts if part.kind == "shot"),
            "prompt": {"text": "".join(part.text for part in parts),
                       "parts": [{"kind": part.kind, "text": part.text} for part in parts]},
            "generated": job["text"],
            "stopped": job["reason"],
            "tokens": job["written"],
            "token_counts": {"prompt": len(job["ids"]), "generated": len(job["written"])},
            "model_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def _result(self, p: _Prepared) -> dict:
        import torch

        request, method = p.request, p.request.get("method", "letter")
        choices, shots, key = request["choices"], list(request.get("shots", ())), request.get("key")
        scored = [
            ScoredContinuation(letter, text, tuple(ids), tuple(lps))
            for letter, text, ids, lps in zip(p.letters, p.texts, p.continuation_ids, p.token_logprobs, strict=True)
        ]
        logprobs = [s.logprob for s in scored]
        probabilities = dict(zip(p.letters, explainers.softmax(logprobs), strict=True))
        if method == "letter":
            prediction = explainers.predict(probabilities)
        else:
            prediction = explainers.pick_option({s.letter: list(s.token_logprobs) for s in scored})
        top = torch.topk(p.next_logprobs, TOP_NEXT_TOKENS)
        top_tokens = [
            {"token": self.loaded.tokenizer.decode([int(i)]), "probability": math.exp(float(lp))}
            for lp, i in zip(top.values, top.indices, strict=True)
        ]
        shots_used = sum(1 for part in p.parts if part.kind == "shot")
        return {
            "method": method,
            "model": {"name": self.loaded.name, "device": self.loaded.device, "dtype": self.loaded.dtype,
                      "threads": self.loaded.threads, "context_length": self.loaded.context_length},
            "subject": request["subject"],
            "shots_requested": len(shots),
            "shots_used": shots_used,
            "prompt": {"text": "".join(part.text for part in p.parts),
                       "parts": [{"kind": part.kind, "text": part.text} for part in p.parts]},
            "options": [
                {"letter": s.letter, "choice": choice, "continuation": s.text, "tokens": len(s.token_ids),
                 "logprob": s.logprob, "probability": probabilities[s.letter]}
                for s, choice in zip(scored, choices, strict=True)
            ],
            "probabilities": probabilities,
            "prediction": prediction,
            "confidence": probabilities[prediction],
            "key": key,
            "correct": None if key is None else prediction == key,
            # How much of the whole vocabulary's probability the K continuations hold: a model that
            # would rather write something else ("The") puts little mass on them.
            "vocabulary_share": sum(math.exp(lp) for lp in logprobs),
            "top_next_tokens": top_tokens,
            "token_counts": {"prompt": len(p.context_ids), "continuations": {s.letter: len(s.token_ids) for s in scored}},
            "model_ms": round((time.perf_counter() - p.started) * 1000, 1),
        }
