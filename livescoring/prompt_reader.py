"""Every prompt token's log-probability, read over token ids, with a prefix cache that needs no hint.

The model server (server.py) answers the requests evaluation tools send to vLLM: a prompt of token
ids whose every token's log-probability is wanted (``echo``), and generations that begin with the
same tokens as earlier requests (a benchmark's header and worked examples, sent whole each time by a
client that knows nothing of this server). :class:`PromptReader` reads a prompt in **blocks** from
its start, each block one forward pass on top of the keys and values of the blocks before it, and
keeps each whole block in :class:`BlockCache` (least recently used out, bounded by bytes). A later
prompt that begins with the same blocks reads them from the cache; only its own tokens run.

Where blocks end: after a blank line (the prompt's text so far ends in two newlines) once a block
holds MIN_BLOCK_TOKENS, and after MAX_BLOCK_TOKENS in any case. A benchmark's prompt is its header
and worked examples, each ending in a blank line, then the question: so the header and each example
are a block, a question's own tokens (after a cached header and examples) are the tail, one pass,
and nothing of the cached prefix is read again. (Fixed 64-token blocks read a question's first
block and its tail in two passes, and up to 63 tokens of the cached prefix again: a pass's cost
here is mostly reading the weights, whatever its length up to a hundred tokens or so.)

What a block gives is computed when it is first asked for, and kept with it: its last hidden states
are kept (the head's input, 2 KiB a token beside 46 KiB of keys and values), and the language-model
head, log-softmax, likeliest TOP_KEPT and ranks run only for a request that reads the prompt's own
tokens' values (``echo``, ``prompt_logprobs``). A generation, or a client that asks what comes after
its prompt, needs one row: the last position's.

Why blocks at places fixed by the tokens, and one prompt per pass: a float32 forward pass gives
numbers that depend (by float rounding, about 1e-5 here) on how the tokens were cut into passes and
on which other rows share a pass (the product's shapes change the CPU kernel's order of additions).
A cache that reused "whatever prefix happens to be cached" would make the same request give
different numbers after different histories, as vLLM's does with prefix caching on
(vllm-project/vllm#42019, #11778). Here a prompt's tokens are always cut at the same places (a
function of the tokens before each place) and each pass holds one prompt; and the head runs over
fixed rows of a pass (every position but its last in one product, the last alone), whichever
request asks first. So a request's numbers are a function of its tokens alone: bit for bit the same
alone, after any other request, or beside any other (tests/model/test_model_server.py). The price is
a pass per block on the first read of a prefix (about 50 ms of weight reading each on this project's
CPU), repaid on every later read.

Standard-library code apart from torch, which is imported when a prompt is read.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

MIN_BLOCK_TOKENS = 8  # a blank line ends a block only after this many tokens (short paragraphs: few passes)
MAX_BLOCK_TOKENS = 128  # without a blank line: a pass reads the whole model's weights (~0.5 GB at float32)
TOP_KEPT = 20  # alternatives kept per position: the most a request may ask for (vLLM's max_logprobs)
CACHE_BYTES = 256 * 2**20
NEXT_ROWS = 16  # whole prompts' next-token distributions kept (192 KiB each for SmolLM2's vocabulary)
JOINED_BYTES = 64 * 2**20  # the last whole-block prefix's joined buffer is kept up to this size (1,400 tokens)


@dataclass(eq=False)
class Segment:
    """One pass's tokens and their last hidden states [n, width]; what the head gives them is
    computed on first need and kept (a cached block's for every later reader)."""

    tokens: tuple[int, ...]
    hidden: object
    inner: tuple | None = None  # (chosen [n - 1], ranks, top values [n - 1, TOP_KEPT], top ids): every row but the last
    last_row: object = None  # [vocabulary] float32: the log-softmax after the last token


@dataclass(eq=False)
class Block(Segment):
    """A cached segment: ``key`` is every prompt token up to its end (a block is only ever reused
    after the same tokens), ``layers`` its own keys and values per layer [1, kv_heads, n, head_dim],
    ``nbytes`` what it holds once its values are computed."""

    key: tuple[int, ...] = ()
    layers: list = None
    nbytes: int = 0


class BlockCache:
    """Blocks by their key, least recently used out first, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = max(0, max_bytes)
        self.blocks: OrderedDict[tuple[int, ...], Block] = OrderedDict()
        self.nbytes = 0

    def chain(self, tokens: list[int], ends: list[int]) -> list[Block]:
        """The cached blocks that begin ``tokens`` (cut at ``ends``), in order (stopping at the first
        missing one). They are marked used deepest first, so a block is always more recent than the
        ones after it: eviction takes a chain from its end, and never leaves a block whose start is gone."""
        found = []
        for end in ends:
            block = self.blocks.get(tuple(tokens[:end]))
            if block is None:
                break
            found.append(block)
        for block in reversed(found):
            self.blocks.move_to_end(block.key)
        return found

    def put(self, block: Block, leading: Sequence[Block] = ()) -> None:
        """Keep ``block`` as the most recent but for ``leading`` (the blocks before it in its prompt, in
        order), which are marked used after it, deepest first (see chain). Putting a new block in as the
        least recent instead made it the first to go: once full, the cache dropped every new prompt's
        blocks as they came and kept the old ones for ever (a 5-shot prefix of a subject met after the
        cache filled was read again for each of its questions)."""
        if block.key in self.blocks or block.nbytes > self.max_bytes:
            return
        self.blocks[block.key] = block
        for before in reversed(leading):
            if before.key in self.blocks:
                self.blocks.move_to_end(before.key)
        self.nbytes += block.nbytes
        while self.nbytes > self.max_bytes:
            _, old = self.blocks.popitem(last=False)
            self.nbytes -= old.nbytes

    def clear(self) -> None:
        self.blocks.clear()
        self.nbytes = 0


class KeysValues:
    """A read's keys and values as the decoder takes them (``layers``: per layer (keys, values)
    [1, kv_heads, capacity, head_dim], filled up to ``length``), every layer's in one tensor
    allocated once at the size the read will reach: each block is copied in once, and a
    generation writes each token's in place.

    Joining them instead (torch.cat on every pass, and on every generated token) copied all that was
    read so far at each step, into growing tensors freed as the next was made: four long prompts read
    side by side left glibc's heap with hundreds of MiB of holes (docs/performance.md, the model
    server's memory). The decoder reads ``[:, :, :length]`` of each, a view with the buffer's strides:
    torch's CPU flash-attention kernel follows strides, so the floats are those of a tensor of exactly
    that length (tests/model/test_model_server.py holds every number to a fresh read's, bit for bit)."""

    def __init__(self, capacity: int):
        self.capacity, self.length = capacity, 0
        self.layers: list | None = None  # allocated when the first keys and values come (their shape)
        self.nbytes = 0

    def append(self, layers: list) -> None:
        """Copy ``layers`` (per layer (keys, values) [1, kv_heads, tokens, head_dim]) in after the others."""
        import torch

        if self.layers is None:
            keys = layers[0][0]
            both = torch.empty((len(layers), 2, *keys.shape[:2], self.capacity, keys.shape[3]), dtype=keys.dtype,
                               device=keys.device)
            self.layers = [(both[i, 0], both[i, 1]) for i in range(len(layers))]
            self.nbytes = both.numel() * both.element_size()
        end = self.length + layers[0][0].shape[2]
        for (keys, values), (new_keys, new_values) in zip(self.layers, layers, strict=True):
            keys[:, :, self.length:end] = new_keys
            values[:, :, self.length:end] = new_values
        self.length = end


@dataclass
class PromptRead:
    """What a read prompt of n tokens gives: per token from the second, its log-probability, rank
    and the likeliest alternatives at its place (empty unless asked for: ``values``); after the
    last, the whole log-softmax (the next token's distribution); ``past`` the prompt's keys and
    values when asked for (a generation's :class:`KeysValues`, with room for its tokens)."""

    tokens: list[int]
    chosen: list[float]  # n - 1
    ranks: list[int]  # n - 1: 1 + how many tokens were likelier
    top: list[list[tuple[int, float]]]  # n: the likeliest after each position (the last: what comes next)
    next_row: object
    cached_tokens: int
    past: KeysValues | None = None


def _value_and_rank(row, token: int) -> tuple[float, int]:
    """``token``'s log-probability in a log-softmax row, and its rank there (1 + how many were likelier)."""
    return row[token].item(), 1 + int((row > row[token]).sum())


def _own(tensor):
    """A copy that owns exactly its memory (a view would keep the whole pass's product alive)."""
    return tensor.clone() if tensor.untyped_storage().nbytes() != tensor.nbytes else tensor


def paragraph_ends(tokenizer) -> tuple[list[int], list[bool]]:
    """Per token id: how many newlines its text ends with, and whether its text is newlines only
    (then the newlines before it count too)."""
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
    trailing = [len(text) - len(text.rstrip("\n")) for text in texts]
    return trailing, [bool(text) and n == len(text) for text, n in zip(texts, trailing, strict=True)]


class PromptReader:
    """Reads prompts on one loaded model (livescoring/model.py's ``LoadedModel``). Not thread-safe:
    one thread (the server's model worker) owns it."""

    def __init__(self, loaded, cache_bytes: int = CACHE_BYTES):
        self.loaded = loaded
        self.cache = BlockCache(cache_bytes)
        # The distribution after the last few whole prompts read: a client that asks after one
        # prompt again (for other tokens' values, say) gets it without a pass; a function of the
        # prompt's tokens like everything here.
        self.next_rows: OrderedDict[tuple[int, ...], object] = OrderedDict()
        # The last read's blocks joined in one buffer, keyed by their tokens: the next question of the
        # same subject and shots attends to exactly these, and joining them again (a fresh buffer,
        # every page of it faulted in, 27 MiB at 5 shots) took 13 ms of a 5-shot question's 140.
        self.joined: tuple[tuple[int, ...], KeysValues] | None = None
        self.decoder = loaded.decoder
        self.trailing_newlines, self.only_newlines = paragraph_ends(loaded.tokenizer)

    def block_ends(self, tokens: list[int]) -> list[int]:
        """Where ``tokens`` are cut into blocks (the module's docstring says why there): each
        block's end, in order; the tokens after the last are the prompt's tail. Each place depends
        only on the tokens before it, so a prompt's blocks are those of any longer prompt it begins."""
        ends, start, newlines = [], 0, 0
        for n, token in enumerate(tokens, start=1):
            newlines = newlines + self.trailing_newlines[token] if self.only_newlines[token] \
                else self.trailing_newlines[token]
            if (newlines >= 2 and n - start >= MIN_BLOCK_TOKENS) or n - start == MAX_BLOCK_TOKENS:
                ends.append(n)
                start = n
        return ends

    def _pass(self, tokens: list[int], start: int, past, keep: bool):
        """One forward pass of ``tokens`` placed at ``start`` on ``past``: the last hidden states of
        every one of them [len, width] (all read, so that each is the same whatever a request asks
        of it) and their keys and values (``keep``)."""
        return self.decoder([tokens], start, past, [(0, p) for p in range(len(tokens))], keep=keep)

    def _log_softmax(self, hidden):
        import torch

        return torch.log_softmax(self.decoder.logits(hidden).float(), dim=-1)

    def _last_row(self, segment: Segment):
        """The log-softmax after the segment's last token: the head over that row alone (a copy,
        so that the product's input sits where a fresh tensor does, whichever segment it ends)."""
        if segment.last_row is None:
            segment.last_row = self._log_softmax(segment.hidden[-1:].clone())[0]
        return segment.last_row

    def _inner(self, segment: Segment) -> tuple:
        """Each of the segment's rows but the last, in one product: the log-probability and rank of
        the token after it (inside the segment) and its likeliest TOP_KEPT (values, ids)."""
        import torch

        if segment.inner is None:
            rows = self._log_softmax(segment.hidden[:-1])
            after = torch.tensor(segment.tokens[1:], dtype=torch.long, device=rows.device)[:, None]
            picked = rows.gather(1, after)[:, 0]
            values, ids = torch.topk(rows, TOP_KEPT, dim=-1)
            segment.inner = (picked, (1 + (rows > picked[:, None]).sum(dim=1)).tolist(), values, ids)
        return segment.inner

    def _values(self, segments: list[Segment], chosen: list, ranks: list, top: list) -> None:
        """The prompt's own tokens' values, segment by segment (filled into the three lists)."""
        import torch

        for i, segment in enumerate(segments):
            if len(segment.tokens) > 1:
                picked, inner_ranks, values, ids = self._inner(segment)
                chosen.extend(picked.tolist())
                ranks.extend(inner_ranks)
                top.extend(self._pairs(ids, values))
            row = self._last_row(segment)
            values, ids = torch.topk(row, TOP_KEPT)
            top.append(list(zip(ids.tolist(), values.tolist(), strict=True)))
            if i + 1 < len(segments):  # the next token's place, from this segment's last row
                value, rank = _value_and_rank(row, segments[i + 1].tokens[0])
                chosen.append(value)
                ranks.append(rank)

    def _past(self, blocks: list[Block], prefix: tuple[int, ...], capacity: int, whole: bool) -> KeysValues:
        """The keys and values of the cached ``blocks`` in one buffer at the size the read reaches
        (KeysValues says why): ``capacity``, a generation's prompt and tokens (its tail's are kept);
        0, the ``prefix`` alone (a block's are always kept: the next pass reads them). A read that keeps
        nothing of its own and finds its ``whole`` prefix cached attends to those blocks alone, so the
        last such buffer (``joined``) serves it again."""
        import torch

        if not capacity and whole and self.joined is not None and self.joined[0] == prefix:
            return self.joined[1]
        past = KeysValues(capacity or len(prefix))
        with torch.inference_mode():
            for block in blocks:
                past.append(block.layers)
        return past

    def steps(self, tokens: list[int], keep_past: bool = False, values: bool = True, room: int = 0):
        """Read ``tokens`` one pass at a time: a generator that first yields {"cached_tokens": n} (how
        many of them the cache held, before any pass), then None after each pass (so that the caller
        may interleave other work or stop), and returns the :class:`PromptRead` (with every token's
        values where ``values``, else only what comes next; with ``keep_past``, the prompt's keys and
        values, with room for ``room`` more tokens: a generation's)."""
        import torch

        if not tokens:
            raise ValueError("a prompt needs at least one token")
        whole = tuple(tokens)
        if not values and not keep_past and whole in self.next_rows:
            self.next_rows.move_to_end(whole)
            yield {"cached_tokens": len(tokens)}
            return PromptRead(list(tokens), [], [], [], self.next_rows[whole], len(tokens))
        ends = self.block_ends(tokens)
        with torch.inference_mode():
            blocks = self.cache.chain(tokens, ends)
        cached_tokens = ends[len(blocks) - 1] if blocks else 0
        yield {"cached_tokens": cached_tokens}
        prefix = tuple(tokens[:ends[-1]]) if ends else ()
        past = self._past(blocks, prefix, len(tokens) + room if keep_past else 0, len(blocks) == len(ends))
        while len(blocks) < len(ends):
            start, end = ends[len(blocks) - 1] if blocks else 0, ends[len(blocks)]
            # Another request reading the same prompt between these passes (the site's read-ahead of a
            # chain of thought and then the reader's own) may have read this block already: it is
            # taken from the cache, the same numbers, so two readers of one prompt share its passes.
            block = self.cache.blocks.get(tuple(tokens[:end]))
            with torch.inference_mode():
                ran = block is None
                if ran:
                    block = self._block(tokens[:end], *self._pass(tokens[start:end], start, past.layers, True))
                    self.cache.put(block, blocks)
                past.append(block.layers)
            blocks.append(block)
            if ran:
                yield None
        if not keep_past and prefix and past.nbytes <= JOINED_BYTES:
            self.joined = (prefix, past)
        start = ends[-1] if ends else 0
        with torch.inference_mode():
            segments: list[Segment] = list(blocks)
            if start < len(tokens):
                hidden, own = self._pass(tokens[start:], start, past.layers, keep_past)
                segments.append(Segment(tuple(tokens[start:]), hidden))
                if keep_past:
                    past.append(own)
            chosen, ranks, top = [], [], []
            if values:
                self._values(segments, chosen, ranks, top)
            next_row = self._last_row(segments[-1])
        self.next_rows[whole] = next_row
        self.next_rows.move_to_end(whole)
        while len(self.next_rows) > NEXT_ROWS:
            self.next_rows.popitem(last=False)
        return PromptRead(list(tokens), chosen, ranks, top, next_row, cached_tokens, past if keep_past else None)

    @staticmethod
    def with_last(read: PromptRead, last: int) -> PromptRead:
        """A prompt's own tokens' values when nothing after it is wanted (an ``echo`` that writes
        nothing): ``read`` is the prompt without its last token, whose values come from the row
        after the others. So they are a function of ``tokens[:-1]`` and the last token, and prompts
        that differ only in their last token (a question's letters " A" … " D") share one read, bit
        for bit. No ``next_row``: ``top`` ends at the last token's place."""
        import torch

        with torch.inference_mode():
            value, rank = _value_and_rank(read.next_row, last)
        return PromptRead(read.tokens + [last], read.chosen + [value], read.ranks + [rank], read.top, None,
                          read.cached_tokens)

    def read(self, tokens: list[int], keep_past: bool = False, values: bool = True) -> PromptRead:
        """:meth:`steps` run to its end in the calling thread."""
        steps = self.steps(tokens, keep_past, values)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def _block(self, key: list[int], hidden, own) -> Block:
        # Its keys and values one tensor, a copy of their own (transformers' decoder gives views of its
        # cache): not two per layer, 49 KiB each at 64 tokens, which glibc placed between a pass's
        # transients in its heap, where a long-lived block kept their space from the next pass's.
        kept = KeysValues(own[0][0].shape[2])
        kept.append(own)
        layers, hidden = kept.layers, _own(hidden)
        n, vocabulary = len(hidden), self.decoder.vocabulary
        # What it holds once its values are computed: keys, values, hidden states, and per row the
        # chosen token's value and rank and TOP_KEPT (value, id) pairs, and the last row's log-softmax.
        nbytes = sum(k.nbytes + v.nbytes for k, v in layers) + hidden.nbytes + n * (4 + 8 + TOP_KEPT * 12) \
            + vocabulary * 4
        return Block(tuple(key[-n:]), hidden, key=tuple(key), layers=layers, nbytes=nbytes)

    @staticmethod
    def _pairs(ids, values) -> list[list[tuple[int, float]]]:
        return [list(zip(i, v, strict=True)) for i, v in zip(ids.tolist(), values.tolist(), strict=True)]

    def extended(self, token: int, past: KeysValues):
        """One more token on a generation's keys and values, written into ``past`` in its room: the
        log-softmax after it."""
        import torch

        with torch.inference_mode():
            hidden, new = self.decoder([[token]], past.length, past.layers, [(0, 0)])
            past.append(new)
            return torch.log_softmax(self.decoder.logits(hidden)[0].float(), dim=-1)
