"""Every prompt token's log-probability, read over token ids, with a prefix cache that needs no hint.

The model server (server.py) answers the requests evaluation tools send to vLLM: a prompt of token
ids whose every token's log-probability is wanted (``echo``), and generations that begin with the
same tokens as earlier requests (a benchmark's header and worked examples, sent whole each time by a
client that knows nothing of this server). :class:`PromptReader` reads a prompt in **blocks** of
BLOCK_TOKENS tokens from its start, each block one forward pass on top of the keys and values of the
blocks before it, and keeps each whole block in :class:`BlockCache` (least recently used out,
bounded by bytes) with what the prompt's log-probabilities need from it: each position's likeliest
TOP_KEPT tokens and the log-probability of the token after it, and the last position's whole
log-softmax (the next block's first token may be any). A later prompt that begins with the same
blocks reads them from the cache; only its own tokens run.

Why blocks at fixed places, and one prompt per pass: a float32 forward pass gives numbers that
depend (by float rounding, about 1e-5 here) on how the tokens were cut into passes and on which
other rows share a pass (the product's shapes change the CPU kernel's order of additions). A cache
that reused "whatever prefix happens to be cached" would make the same request give different
numbers after different histories, as vLLM's does with prefix caching on (vllm-project/vllm#42019,
#11778). Here a prompt's tokens are always cut at the same places (every BLOCK_TOKENS from its
start, then its tail) and each pass holds one prompt, so a request's numbers are a function of its
tokens alone: bit for bit the same alone, after any other request, or beside any other
(tests/model/test_model_server.py). The price is a pass per block on the first read of a prefix
(about 50 ms of weight reading each on this project's CPU), repaid on every later read.

Standard-library code apart from torch, which is imported when a prompt is read.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

BLOCK_TOKENS = 64  # a pass reads the whole model's weights (~0.5 GB at float32): few passes, not tiny blocks
TOP_KEPT = 20  # alternatives kept per position: the most a request may ask for (vLLM's max_logprobs)
CACHE_BYTES = 256 * 2**20


@dataclass(eq=False)
class Block:
    """One cached block: ``key`` is every prompt token up to its end (a block is only ever reused
    after the same tokens), ``layers`` its own keys and values per layer [1, kv_heads, B, head_dim]."""

    key: tuple[int, ...]
    layers: list
    chosen: object  # [B - 1] float32: the log-probability of each next token inside the block
    ranks: list[int]  # [B - 1]: 1 + how many tokens were likelier than each of those
    top_values: object  # [B, TOP_KEPT] float32, likeliest first
    top_ids: object  # [B, TOP_KEPT] int64
    last_row: object  # [vocabulary] float32: the log-softmax after the block's last token
    nbytes: int


class BlockCache:
    """Blocks by their key, least recently used out first, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = max(0, max_bytes)
        self.blocks: OrderedDict[tuple[int, ...], Block] = OrderedDict()
        self.nbytes = 0

    def chain(self, tokens: list[int], block_tokens: int) -> list[Block]:
        """The cached blocks that begin ``tokens``, in order (stopping at the first missing one).
        They are marked used deepest first, so a block is always more recent than the ones after
        it: eviction takes a chain from its end, and never leaves a block whose start is gone."""
        found = []
        for end in range(block_tokens, len(tokens) + 1, block_tokens):
            block = self.blocks.get(tuple(tokens[:end]))
            if block is None:
                break
            found.append(block)
        for block in reversed(found):
            self.blocks.move_to_end(block.key)
        return found

    def put(self, block: Block) -> None:
        if block.key in self.blocks or block.nbytes > self.max_bytes:
            return
        self.blocks[block.key] = block
        self.blocks.move_to_end(block.key, last=False)  # older than the blocks it leads to (see chain)
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

    def append(self, layers: list) -> None:
        """Copy ``layers`` (per layer (keys, values) [1, kv_heads, tokens, head_dim]) in after the others."""
        import torch

        if self.layers is None:
            keys = layers[0][0]
            both = torch.empty((len(layers), 2, *keys.shape[:2], self.capacity, keys.shape[3]), dtype=keys.dtype,
                               device=keys.device)
            self.layers = [(both[i, 0], both[i, 1]) for i in range(len(layers))]
        end = self.length + layers[0][0].shape[2]
        for (keys, values), (new_keys, new_values) in zip(self.layers, layers, strict=True):
            keys[:, :, self.length:end] = new_keys
            values[:, :, self.length:end] = new_values
        self.length = end


@dataclass
class PromptRead:
    """What a read prompt of n tokens gives: per token from the second, its log-probability, rank
    and the likeliest alternatives at its place; after the last, the whole log-softmax (the next
    token's distribution); ``past`` the prompt's keys and values when asked for (a generation's
    :class:`KeysValues`, with room for its tokens)."""

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


def _row_values(rows, tokens: list[int]):
    """What a pass's rows give ``tokens`` (the pass's own, in order): each next token's log-probability
    and rank, and each place's likeliest TOP_KEPT (values, ids)."""
    import torch

    picked = rows[:-1].gather(1, torch.tensor(tokens[1:], device=rows.device)[:, None])[:, 0]
    values, ids = torch.topk(rows, TOP_KEPT, dim=-1)
    return picked, (1 + (rows[:-1] > picked[:, None]).sum(dim=1)).tolist(), values, ids


class PromptReader:
    """Reads prompts on one loaded model (livescoring/model.py's ``LoadedModel``). Not thread-safe:
    one thread (the server's model worker) owns it."""

    def __init__(self, loaded, cache_bytes: int = CACHE_BYTES, block_tokens: int = BLOCK_TOKENS):
        from .decoder import decoder_for

        self.loaded = loaded
        self.block_tokens = block_tokens
        self.cache = BlockCache(cache_bytes)
        self.decoder = decoder_for(loaded.model)

    def _pass(self, tokens: list[int], start: int, past, keep: bool):
        """One forward pass of ``tokens`` placed at ``start`` on ``past``: the log-softmax after
        every one of them [len, vocabulary] and their keys and values (``keep``)."""
        import torch

        hidden, own = self.decoder([tokens], start, past, [(0, p) for p in range(len(tokens))], keep=keep)
        return torch.log_softmax(self.loaded.model.lm_head(hidden).float(), dim=-1), own

    def steps(self, tokens: list[int], keep_past: bool = False, room: int = 0):
        """Read ``tokens`` one pass at a time: a generator that first yields {"cached_tokens": n} (how
        many of them the cache held, before any pass), then None after each pass (so that the caller
        may interleave other work or stop), and returns the :class:`PromptRead` (with ``keep_past``,
        the prompt's keys and values, with room for ``room`` more tokens: a generation's).

        Between passes a read holds its keys and values and the values it will answer, not the
        blocks: a block that other readers' blocks push out of the cache meanwhile is freed."""
        import torch

        if not tokens:
            raise ValueError("a prompt needs at least one token")
        b = self.block_tokens
        with torch.inference_mode():
            found = self.cache.chain(tokens, b)
        cached_tokens = len(found) * b
        yield {"cached_tokens": cached_tokens}
        whole = len(tokens) // b
        # The tail's keys and values are kept only for a generation; a block's always (the next pass reads them).
        past = KeysValues(len(tokens) + room if keep_past else whole * b)
        chosen, ranks, top = [], [], []

        def take(block: Block) -> None:
            """The block's keys and values into ``past``, its values (and the next token's) into the lists."""
            past.append(block.layers)
            chosen.extend(block.chosen.tolist())
            ranks.extend(block.ranks)
            top.extend(self._pairs(block.top_ids, block.top_values))
            if len(block.key) < len(tokens):  # the next token's place, from this block's last row
                value, rank = _value_and_rank(block.last_row, tokens[len(block.key)])
                chosen.append(value)
                ranks.append(rank)

        with torch.inference_mode():
            for block in found:
                take(block)
        found.clear()
        for start in range(cached_tokens, whole * b, b):
            # Another request reading the same prompt between these passes (the site's read-ahead of a
            # chain of thought and then the reader's own) may have read this block already: it is
            # taken from the cache, the same numbers, so two readers of one prompt share its passes.
            block = self.cache.blocks.get(tuple(tokens[:start + b]))
            ran = block is None
            with torch.inference_mode():
                if ran:
                    block = self._block(tokens[:start + b], past.layers)
                    self.cache.put(block)
                take(block)
            if ran:
                yield None
        start = whole * b
        with torch.inference_mode():
            if start < len(tokens):
                rows, own = self._pass(tokens[start:], start, past.layers, keep_past)
                picked, tail_ranks, values, ids = _row_values(rows, tokens[start:])
                chosen.extend(picked.tolist())
                ranks.extend(tail_ranks)
                top.extend(self._pairs(ids, values))
                next_row = rows[-1].clone()
                if keep_past:
                    past.append(own)
            else:
                next_row = block.last_row
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

    def read(self, tokens: list[int], keep_past: bool = False) -> PromptRead:
        """:meth:`steps` run to its end in the calling thread."""
        steps = self.steps(tokens, keep_past)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    def _block(self, key: list[int], past) -> Block:
        """Read the block that ends ``key`` on ``past`` (the keys and values of the blocks before it): its
        pass's rows [B, vocabulary] are gone once its values are taken, before the next request's turn."""
        rows, own = self._pass(key[-self.block_tokens:], len(key) - self.block_tokens, past, True)
        chosen, ranks, top_values, top_ids = _row_values(rows, key[-self.block_tokens:])
        last_row = rows[-1].clone()  # a view would keep the whole pass's rows alive
        # One tensor for the block, not two per layer (49 KiB each at 64 tokens, which glibc placed
        # between a pass's transients in its heap, where a long-lived block kept their space from the
        # next pass's); a copy of its own too (transformers' decoder gives views of its cache).
        kept = KeysValues(self.block_tokens)
        kept.append(own)
        layers = kept.layers
        nbytes = sum(k.nbytes + v.nbytes for k, v in layers) + sum(
            t.nbytes for t in (chosen, top_values, top_ids, last_row)) + 8 * len(ranks)
        return Block(tuple(key), layers, chosen, ranks, top_values, top_ids, last_row, nbytes)

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
            return torch.log_softmax(self.loaded.model.lm_head(hidden)[0].float(), dim=-1)
