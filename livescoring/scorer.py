"""The model's narrow interface, as lm-evaluation-harness's ``lm_eval/api/model.py`` draws it, fast.

The scorer knows no task: a benchmark (benchmarks/server/multiple_choice.py) builds the prompts and
reads the answers. Two kinds of request:

* :class:`Loglikelihood` (the harness's ``loglikelihood``): a context and a continuation; the answer
  is the continuation's log-probability after the context (the sum of its tokens') and whether it
  is the greedy continuation (every token the likeliest at its place), with each token's
  log-probability, the context's length in tokens and the likeliest next tokens after the context.
* :class:`Generation` (the harness's ``generate_until``): a context, ``until`` strings and
  ``max_gen_toks``; the answer is the greedy text, as the harness runs it on a Hugging Face model:
  stopped at the end-of-text token, after ``max_gen_toks`` tokens, or cut at the first ``until``
  string. The server streams generations instead (worker.py, ``ScoringService.generate_until``).

Either request may name ``shared``: the leading part of its context that many requests share (a
benchmark's header and worked examples). Its key/value cache is kept and reused; it changes no number.

Tokenisation follows the harness: a context and a continuation are encoded as
``context_ids = encode(context)`` and ``continuation_ids = encode(context + continuation)[len(context_ids):]``,
with no special tokens (trailing spaces of the context move to the continuation). A request the
model cannot hold raises PromptTooLong; :meth:`Scorer.token_count` says beforehand how many tokens
it takes, so that a benchmark can shorten its prompt first (drop worked examples).

Speed without changing a number (the model service chapter of docs/ says how it is measured):

* **Prefix reuse.** The shared text's key/value cache is computed once and kept (an LRU bounded by
  bytes); a request then runs only its own tokens on top. The split is made on tokens, not text:
  the whole context is tokenised as always and the longest common token prefix with the cached one
  is reused, so tokenisation never changes (BPE may merge across the text boundary; those tokens
  are simply recomputed).
* **Packed batches.** Requests that share a context are scored together: the context's row reads
  the next-token distribution once, and each continuation of several tokens adds one row; a row
  whose tokens begin another's is read from the longer one (so "\nA" … "\nD" after a chat prompt
  run as one row, with the context's own read). Rows
  that share a cached prefix run in one forward pass, each row's own tokens on top of the prefix
  (livescoring/decoder.py packs them one after another, with no padding). A context that names no
  shared text but has several continuations of several tokens is its own prefix for the call: it
  runs once, and each continuation's tokens on top (not kept in the cache). The language-model head
  (49,152 × 576 in SmolLM2) runs only at the positions whose log-probabilities are read.

``Scorer(loaded, reuse_prefix=False)`` is the reference path instead: each row alone, one forward
pass over its whole sequence with logits at every position, as the harness runs it. The tests and
bench/ compare the two.

Long because: one class, :class:`Scorer`, serves both of the harness's requests over one prefix
cache, one token cache and one batched forward pass, and its methods share that state; split, a
request's path would be read across files that each reach into the same object. Its records
(requests, answers, rows) are short and read with it.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .greedy import greedy_decode

GENERATE_MAX_NEW_TOKENS = 256  # lm-evaluation-harness's max_gen_toks for Hugging Face models
TOP_NEXT_TOKENS = 5
PREFIX_CACHE_BYTES = 256 * 2**20  # SmolLM2-135M holds 46 KiB of keys and values per token in float32
BATCH_ROWS = 8  # rows per forward pass; bench/scoring.py measures the choice
ENCODED_CONTEXTS = 64  # contexts whose tokens are kept: token_count's, then the scoring's of the same
# Tokens one packed forward pass may run in the server (ScoringService; a row longer than this runs
# alone). A pass's activations grow with its tokens (at float32, about 40 KiB per token at once in
# SmolLM2's widest layer, the MLP): eight rows of a long 5-shot question's own ~800 tokens made passes
# of 6,400 tokens (issue 26's memory). Short questions still fill BATCH_ROWS rows. Which rows share a
# pass moves a probability by float rounding only (as the server's micro-batches already do, within
# 1e-5 of the reference), so Scorer's own default is no bound: the batch command's rows are unchanged.
# A bounded scorer also gives its freed memory back after a call that ran that many tokens or more.
PASS_TOKENS = 2048


class PromptTooLong(ValueError):
    """A request takes more tokens than the model's context holds."""


class ScoringCancelled(RuntimeError):
    """Every caller of a batch gave up; the batch stopped between forward passes."""


@dataclass(frozen=True)
class Loglikelihood:
    """How probable ``continuation`` is after ``context``; ``shared``: a leading part of ``context``
    that other requests share, whose key/value cache is worth keeping ("" for none)."""

    context: str
    continuation: str
    shared: str = ""


@dataclass(frozen=True)
class LoglikelihoodAnswer:
    logprob: float  # the continuation's tokens' log-probabilities, summed
    is_greedy: bool  # every token of the continuation the likeliest at its place
    token_logprobs: tuple[float, ...]
    context_tokens: int
    next_tokens: tuple[tuple[str, float], ...]  # the likeliest tokens after the context: (text, probability)


@dataclass(frozen=True)
class Generation:
    """Greedy text after ``context``, until one of ``until``, the end of text or ``max_gen_toks`` tokens."""

    context: str
    until: tuple[str, ...] = ()
    max_gen_toks: int = GENERATE_MAX_NEW_TOKENS
    shared: str = ""


@dataclass(frozen=True)
class GenerationAnswer:
    text: str  # cut before the first ``until`` string
    stopped: str  # "stop" (an until string), "end of text" or "length"
    tokens: tuple[int, ...]  # the tokens written (up to and with the one that completed a stop string)
    context_tokens: int


@dataclass
class _Context:
    """One context of a call and its distinct continuations, after tokenisation, before the model runs."""

    text: str
    shared: str
    continuations: list[str]
    context_ids: list[int] = field(default_factory=list)
    continuation_ids: list[list[int]] = field(default_factory=list)
    token_logprobs: list[list[float]] = field(default_factory=list)
    greedy: list[bool] = field(default_factory=list)
    next_logprobs: object = None  # log-softmax over the vocabulary after the whole context


@dataclass(frozen=True)
class _Row:
    """One sequence of the forward pass and the positions whose next-token log-probabilities are read.

    Each read is (a position of ``tokens``, the token whose log-probability is wanted there or None
    to keep the whole distribution, whose it is: a continuation's index, or None for the context's
    own read right after it). One row can hold the reads of several: see ``Scorer._rows``."""

    context: int
    tokens: tuple[int, ...]
    reads: tuple[tuple[int, int | None, int | None], ...]


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


def model_facts(loaded) -> dict:
    """The model as a result names it (a loaded model's facts, or the model server's: remote.py)."""
    return {"name": loaded.name, "device": loaded.device, "dtype": loaded.dtype, "threads": loaded.threads,
            "context_length": loaded.context_length}


class Scorer:
    """Holds a loaded model; every call is pure inference under torch.inference_mode()."""

    def __init__(self, loaded, reuse_prefix: bool = True, batch_rows: int = BATCH_ROWS,
                 prefix_cache_bytes: int = PREFIX_CACHE_BYTES, decoder=None, pass_tokens: int = 0):
        self.loaded = loaded
        self.reuse_prefix = reuse_prefix
        self.batch_rows = max(1, batch_rows)
        self.pass_tokens = max(0, pass_tokens)  # 0: no bound but batch_rows
        self.prefixes = PrefixCache(prefix_cache_bytes)
        self.decoder = decoder or loaded.decoder  # read-only: scorers on one model share it

        self._encoded: OrderedDict[tuple, object] = OrderedDict()  # ENCODED_CONTEXTS tokenisations, last used last

    @property
    def context_length(self) -> int:
        return self.loaded.context_length

    def model_facts(self) -> dict:
        return model_facts(self.loaded)

    # -- tokenisation -------------------------------------------------------------------------
    def _remembered(self, key: tuple, encode: Callable[[], object]):
        """``encode()``'s result for ``key``, kept for the next call with the same key (a benchmark
        counts a prompt's tokens, then scores it)."""
        found = self._encoded.get(key)
        if found is None:
            found = self._encoded[key] = encode()
            if len(self._encoded) > ENCODED_CONTEXTS:
                self._encoded.popitem(last=False)
        else:
            self._encoded.move_to_end(key)
        return found

    def encode(self, text: str) -> list[int]:
        return self._remembered((text,), lambda: list(self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"]))

    def encode_pairs(self, context: str, continuations: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        """The harness's split of context and continuation, for each continuation after one context:
        trailing spaces of the context move to the continuation; the context is encoded once, and
        with every continuation, in one call of the tokenizer."""
        def encode():
            text, after = context, list(continuations)
            spaces = len(text) - len(text.rstrip())
            if spaces:
                text, after = text[:-spaces], [text[-spaces:] + c for c in after]
            context_ids, *wholes = self.loaded.tokenizer([text] + [text + c for c in after],
                                                         add_special_tokens=False)["input_ids"]
            return list(context_ids), [list(whole[len(context_ids):]) for whole in wholes]
        return self._remembered((context, tuple(continuations)), encode)

    def token_count(self, context: str, continuations: Sequence[str] = ()) -> int:
        """The tokens the model must hold for ``context`` followed by the longest of ``continuations``
        (the context alone when there are none; a generation adds its ``max_gen_toks``)."""
        if not continuations:
            return len(self.encode(context))
        context_ids, continuation_ids = self.encode_pairs(context, continuations)
        return len(context_ids) + max(map(len, continuation_ids))

    def _check_fits(self, tokens: int) -> None:
        if tokens > self.context_length:
            raise PromptTooLong(f"the request takes {tokens} tokens; the model's context holds {self.context_length}")

    # -- loglikelihood ------------------------------------------------------------------------
    def loglikelihood(self, requests: Sequence[Loglikelihood],
                      stop: Callable[[], bool] | None = None) -> list[LoglikelihoodAnswer]:
        """Each request's answer, in order. Requests with one context are scored together (its row
        once, a row per continuation of several tokens); ``stop`` is asked between forward passes."""
        contexts: dict[tuple[str, str], _Context] = {}
        places = []
        for request in requests:
            context = contexts.setdefault((request.context, request.shared),
                                          _Context(request.context, request.shared, []))
            if request.continuation not in context.continuations:
                context.continuations.append(request.continuation)
            places.append((context, context.continuations.index(request.continuation)))
        for context in contexts.values():
            if not context.text:
                raise ValueError("a context needs at least one token")
            context.context_ids, context.continuation_ids = self.encode_pairs(context.text, context.continuations)
            if not all(context.continuation_ids):
                raise ValueError("a continuation needs at least one token")
            self._check_fits(len(context.context_ids) + max(map(len, context.continuation_ids)))
        self._run(list(contexts.values()), stop)
        next_tokens = {id(context): self._next_tokens(context) for context in contexts.values()}
        return [LoglikelihoodAnswer(math.fsum(context.token_logprobs[k]), context.greedy[k],
                                    tuple(context.token_logprobs[k]), len(context.context_ids), next_tokens[id(context)])
                for context, k in places]

    def _next_tokens(self, context: _Context) -> tuple[tuple[str, float], ...]:
        import torch

        top = torch.topk(context.next_logprobs, TOP_NEXT_TOKENS)
        return tuple((self.loaded.tokenizer.decode([int(i)]), math.exp(float(lp)))
                     for lp, i in zip(top.values, top.indices, strict=True))

    @staticmethod
    def _rows(index: int, context: _Context) -> list[_Row]:
        """The rows the model must run for ``context``: its own read (the whole next-token
        distribution after it) and, for each continuation of several tokens, its later tokens, each
        after the ones before it (the harness's one sequence per continuation, context + continuation
        minus its last token).

        A row whose tokens begin another row's is read from that longer row instead (the model is
        causal: what it reads at a position depends only on the tokens up to there). So the context's
        own read rides on a continuation's row, and continuations that differ only in their last
        token (a chat prompt's "\nA" … "\nD", after the harness moved the context's trailing newline
        into each) run as one row."""
        ctx = tuple(context.context_ids)
        rows = [_Row(index, ctx, ((len(ctx) - 1, None, None),))]
        for c, cont in enumerate(context.continuation_ids):
            if len(cont) > 1:
                reads = tuple((len(ctx) - 1 + i, token, c) for i, token in enumerate(cont[1:], start=1))
                rows.append(_Row(index, ctx + tuple(cont[:-1]), reads))
        merged: list[_Row] = []
        for row in sorted(rows, key=lambda r: len(r.tokens), reverse=True):  # stable: the longest first
            into = next((i for i, longer in enumerate(merged) if longer.tokens[:len(row.tokens)] == row.tokens), None)
            if into is None:
                merged.append(row)
            else:
                merged[into] = _Row(index, merged[into].tokens, merged[into].reads + row.reads)
        return merged

    # -- the model ----------------------------------------------------------------------------
    def _prefix(self, text: str, keep: bool = True) -> _Prefix | None:
        """The cached key/value states of a shared prefix, computed on first use (and kept in the
        cache unless ``keep`` is False)."""
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
        if keep:
            self.prefixes.put(text, entry)
        return entry

    def _forward(self, rows: list[_Row], prefix: _Prefix | None) -> list[list]:
        """One forward pass over ``rows`` (all sharing ``prefix``); per row, the values it reads:
        (the token's log-probability, whether it is the likeliest there), or the whole log-softmax
        vector where the token is None."""
        import torch

        reused = 0
        if prefix is not None:
            # At least the first read position must run, so its hidden state exists.
            reused = min(min(common_prefix_length(prefix.token_ids, r.tokens) for r in rows),
                         min(pos for r in rows for pos, _, _ in r.reads))
        # Each (row, position) runs the last layer and the head once, however many tokens it reads.
        places: dict[tuple[int, int], int] = {}
        for i, r in enumerate(rows):
            for pos, _, _ in r.reads:
                places.setdefault((i, pos - reused), len(places))
        hidden, _ = self.decoder([r.tokens[reused:] for r in rows], reused, prefix.layers if reused else None,
                                 list(places), keep=False)
        logprobs = torch.log_softmax(self.decoder.logits(hidden).float(), dim=-1)
        best = logprobs.argmax(dim=-1).tolist()
        values = []
        for i, r in enumerate(rows):
            got = []
            for pos, token, _ in r.reads:
                n = places[(i, pos - reused)]
                got.append(logprobs[n] if token is None else (logprobs[n, token].item(), best[n] == token))
            values.append(got)
        return values

    def _forward_full(self, row: _Row) -> list:
        """The reference: one sequence, no cache, logits at every position, log-softmax, read."""
        import torch

        model, device = self.loaded.model, self.loaded.device
        logits = model(torch.tensor([row.tokens], device=device)).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return [logprobs[pos] if token is None else (logprobs[pos, token].item(), int(logprobs[pos].argmax()) == token)
                for pos, token, _ in row.reads]

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

    def _run(self, contexts: list[_Context], stop: Callable[[], bool] | None) -> None:
        """Fill each context's token log-probabilities, batching rows that share a prefix."""
        import torch

        groups: dict[str, list[_Row]] = {}
        own_prefix = set()  # contexts that are their own prefix, for this call only
        for index, context in enumerate(contexts):
            rows = self._rows(index, context)
            key = context.shared if self.reuse_prefix else ""
            if self.reuse_prefix and not context.shared and len(rows) > 1:
                # No shared text named, but several continuations of several tokens (the harness asks
                # for options so): the context runs once, each continuation's own tokens on top of it.
                key = context.text
                own_prefix.add(key)
            groups.setdefault(key, []).extend(rows)
        results: dict[tuple[int, int | None], list] = {}
        ran = 0  # tokens through the model in this call
        with torch.inference_mode():
            for shared_text, rows in groups.items():
                if self.reuse_prefix:
                    fresh = shared_text not in self.prefixes.entries
                    prefix = self._prefix(shared_text, keep=shared_text not in own_prefix)
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
                        for (_, _, whose), value in zip(row.reads, got, strict=True):
                            results.setdefault((row.context, whose), []).append(value)
        if self.pass_tokens and ran >= self.pass_tokens:  # the server's scorer: back to its resting size
            return_freed_memory()
        for index, context in enumerate(contexts):
            (context.next_logprobs,) = results[(index, None)]
            likeliest = int(context.next_logprobs.argmax())
            for c, cont in enumerate(context.continuation_ids):
                later = results[(index, c)] if len(cont) > 1 else []
                context.token_logprobs.append([context.next_logprobs[cont[0]].item()] + [lp for lp, _ in later])
                context.greedy.append(likeliest == cont[0] and all(greedy for _, greedy in later))


    # -- generate_until -----------------------------------------------------------------------
    def generate_until(self, requests: Sequence[Generation],
                       stop: Callable[[], bool] | None = None) -> list[GenerationAnswer]:
        """Greedy generation after each context, as lm-evaluation-harness's ``generate_until`` runs it
        on a Hugging Face model (greedy, one sequence at a time): stop at the model's end-of-text
        token, at the first of the request's ``until`` strings (the text is cut there), or after
        ``max_gen_toks`` tokens.

        The fast path reuses the shared prefix's cached keys and values (as loglikelihood does):
        the contexts that share one run their own tokens packed in one pass (``batch_rows`` to a
        pass, livescoring/decoder.py), then each one token per pass on top of its own growing cache.
        The reference path (``reuse_prefix=False``) is transformers' own forward with its cache,
        over each whole context."""
        import torch

        jobs = []
        for request in requests:
            ids = self.encode(request.context)
            if not ids:
                raise ValueError("a context needs at least one token")
            self._check_fits(len(ids) + request.max_gen_toks)
            jobs.append({"request": request, "ids": ids})
        with torch.inference_mode():
            if self.reuse_prefix:
                groups: dict[str, list[dict]] = {}
                for job in jobs:
                    groups.setdefault(job["request"].shared, []).append(job)
                for shared, members in groups.items():
                    prefix = self._prefix(shared)
                    members = sorted(members, key=lambda j: len(j["ids"]))
                    for start in range(0, len(members), self.batch_rows):
                        if stop is not None and stop():
                            raise ScoringCancelled("every caller of this batch gave up waiting")
                        self._first_pass(members[start:start + self.batch_rows], prefix)
            for job in jobs:
                job.update(self._decode(job, stop))
        return [GenerationAnswer(job["text"], job["reason"], tuple(job["written"]), len(job["ids"])) for job in jobs]

    def _first_pass(self, jobs: list[dict], prefix: _Prefix | None) -> None:
        """The contexts' own tokens in one packed pass over the shared prefix: each job's logits after
        its context and its keys and values (the prefix's first tokens, then its own)."""
        reused = min(min(common_prefix_length(prefix.token_ids, j["ids"]), len(j["ids"]) - 1)
                     for j in jobs) if prefix else 0
        rows = [j["ids"][reused:] for j in jobs]
        hidden, own = self.decoder(rows, reused, prefix.layers if reused else None,
                                   [(r, len(row) - 1) for r, row in enumerate(rows)])
        logits = self.decoder.logits(hidden)
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
        return self.decoder.logits(hidden)[0], past

    def extended(self, token: int, past: list):
        """One more token on a generation's keys and values: (the logits after it, the longer cache)."""
        import torch

        hidden, new = self.decoder([[token]], past[0][0].shape[2], past, [(0, 0)])
        past = [(torch.cat([k0, k], dim=2), torch.cat([v0, v], dim=2)) for (k0, v0), (k, v) in zip(past, new, strict=True)]
        return self.decoder.logits(hidden)[0], past

    def _decode(self, job: dict, stop: Callable[[], bool] | None) -> dict:
        """One context's greedy tokens from its first logits (the fast path's, or the reference
        path's own forward over the whole context), a pass per new token."""
        import torch

        tokenizer, model, device = self.loaded.tokenizer, self.loaded.model, self.loaded.device
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
                return self.decoder.logits(hidden)[0]
        else:
            state["out"] = model(input_ids=torch.tensor([job["ids"]], device=device), use_cache=True, logits_to_keep=1)
            logits = state["out"].logits[0, -1]

            def logits_after(token: int):
                state["out"] = model(input_ids=torch.tensor([[token]], device=device), cache=state["out"].cache,
                                     use_cache=True)
                return state["out"].logits[0, -1]
        for step in greedy_decode(tokenizer, logits, logits_after, job["request"].max_gen_toks,
                                  job["request"].until):
            if step.reason is not None:
                break
            if stop is not None and stop():  # between forward passes
                raise ScoringCancelled("every caller of this batch gave up waiting")
        state.clear()  # the context's key/value cache goes now
        return {"written": list(step.written), "text": step.text, "reason": step.reason}
