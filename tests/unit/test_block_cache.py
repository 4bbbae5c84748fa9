"""livescoring/prompt_reader.py's BlockCache: least recently used out, a chain from its end, and a
full cache still takes in a new prompt's blocks (it kept the old ones and dropped every new one)."""
from __future__ import annotations

from livescoring.prompt_reader import Block, BlockCache


def chain_of(first: int, blocks: int, size: int = 10) -> list[Block]:
    """A prompt's blocks: each keyed by every token up to its end."""
    tokens = list(range(first, first + blocks * size))
    return [Block(tuple(tokens[:end]), None, key=tuple(tokens[:end]), nbytes=size)
            for end in range(size, blocks * size + 1, size)]


def read(cache: BlockCache, blocks: list[Block]) -> int:
    """What a prompt read does: take its cached blocks, put the ones missing; the blocks it found."""
    tokens = list(blocks[-1].key)
    found = cache.chain(tokens, [len(b.key) for b in blocks])
    for n in range(len(found), len(blocks)):
        cache.put(blocks[n], blocks[:n])
    return len(found)


def test_a_full_cache_takes_a_new_prompts_blocks_and_lets_the_least_recent_go():
    cache = BlockCache(max_bytes=60)
    old, new = chain_of(0, 4), chain_of(1000, 4)
    assert read(cache, old) == 0 and read(cache, old) == 4
    assert read(cache, new) == 0  # over the bound: the old prompt, least recently used, gives way
    assert read(cache, new) == 4, "the new prompt's blocks were dropped as they were put"
    assert cache.nbytes <= 60 and not any(b.key in cache.blocks for b in old[2:])


def test_a_chain_goes_from_its_end_and_a_shared_start_stays():
    cache = BlockCache(max_bytes=50)
    shared = chain_of(0, 3)  # a header and worked examples

    def question(token: int) -> list[Block]:  # the shared blocks, then a question's one-token block
        key = (*shared[-1].key, token)
        return [*shared, Block(key, None, key=key, nbytes=10)]

    first, second, third = question(1), question(2), question(3)
    read(cache, first)
    read(cache, second)  # 50 bytes: all fit
    assert read(cache, third) == 3  # the shared blocks found; the oldest question's block goes
    assert first[-1].key not in cache.blocks and second[-1].key in cache.blocks
    assert all(b.key in cache.blocks for b in shared)
    # Eviction never leaves a block whose start is gone: each cached block's parent is cached.
    keys = set(cache.blocks)
    assert all(len(k) == 10 or k[:len(k) - (1 if len(k) % 10 else 10)] in keys for k in keys)
