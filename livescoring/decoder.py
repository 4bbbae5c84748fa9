"""The model's decoder stack run over a cached prefix: the forward pass of the scorer's fast path.

``decoder_for(model)`` returns one of two objects with the same call,
``decoder(rows, start, past, reads, keep=True) -> (hidden, layers)``: ``rows`` are lists of token
ids, of any lengths, each placed at positions ``start``, ``start + 1``, … on top of ``past`` (per
layer (keys, values) of one prefix, [1, heads, ≥ start, head_dim], shared by every row); a token
attends to the prefix and to the tokens before it in its row. Back come the last hidden states
at ``reads``, (row, token) pairs in any order [len(reads), width], and this pass's own keys and
values per layer, which a one-row pass with no reads keeps as a prefix's cache (``keep=False``:
none, so a scoring pass holds one layer's at a time, not every layer's for every packed token). ``decoder.logits(hidden)``
is the model's language-model head over such hidden states, and ``decoder.vocabulary`` its width.

* ``LlamaDecoder``, for the Llama family (SmolLM2 is one): the same arithmetic as transformers'
  ``LlamaModel`` (float32 RMSNorm, rotary embeddings from the model's own ``inv_freq``, grouped
  query attention with the softmax's scale), written out so that a pass does less:

  - the rows' tokens packed one after another with no padding: every product but attention is
    per token, and one product over several short questions' tokens runs nearer the CPU's peak
    than one per question (the weights are read once for all of them);
  - attention in two parts combined exactly by their log-sum-exps: all the rows' queries against
    the shared prefix in one product with no mask, then each row's queries against its own
    tokens under a causal mask; the prefix's keys are never copied per row;
  - q, k and v in one product, the causal mask built once per pass, no cache objects;
  - in the last layer, only the read positions' queries, attention and MLP (the others' keys and
    values are all that later tokens use).
* ``TransformersDecoder``, any other causal LM: transformers' own forward with a ``DynamicCache``
  over the rows right-padded (padding after a row's last token changes nothing a real token
  computes, so no padding mask is needed).

Neither changes a number the reference path computes by more than float rounding:
tests/model/test_fast_scoring.py holds the scorer on either to transformers' full-prompt forward within
1e-5, and tests/model/test_decoder.py holds the two decoders to each other.
"""
from __future__ import annotations


def written_out_attention(q, keys, values, mask=None):
    """Softmax attention [1, heads, n, head_dim] and each query's log-sum-exp [1, heads, n], in plain
    tensor arithmetic: what torch's CPU flash-attention kernel returns, for other devices. Scores
    are taken in float32 whatever the model's dtype, as the fused kernels do."""
    import torch

    scores = q.float() @ keys.float().transpose(-1, -2) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores + mask.float()
    lse = torch.logsumexp(scores, dim=-1)
    return ((scores - lse[..., None]).exp() @ values.float()).to(q.dtype), lse


def decoder_for(model):
    """The lean Llama decoder where the model is one it computes exactly, transformers' otherwise."""
    return LlamaDecoder.from_module(model) if LlamaDecoder.computes(model.config) else TransformersDecoder(model)


class TransformersDecoder:
    def __init__(self, model):
        self.model = model

    @property
    def vocabulary(self) -> int:
        return self.model.lm_head.out_features

    def logits(self, hidden):
        """The language-model head over last hidden states [n, width]: logits [n, vocabulary]."""
        return self.model.lm_head(hidden)

    def __call__(self, rows, start: int, past=None, reads=(), keep: bool = True):
        import torch
        from transformers import DynamicCache

        # Right padding: a real token never attends to the padding after it, so no mask is needed.
        width = max(len(row) for row in rows)
        ids = torch.tensor([list(row) + [0] * (width - len(row)) for row in rows], device=self.model.device)
        positions = torch.arange(start, start + width, device=ids.device).unsqueeze(0).expand(len(rows), -1)
        cache = DynamicCache(ddp_cache_data=[
            (k[:, :, :start].expand(len(rows), -1, -1, -1), v[:, :, :start].expand(len(rows), -1, -1, -1))
            for k, v in past
        ]) if past else DynamicCache()
        out = self.model.model(input_ids=ids, position_ids=positions, cache=cache, use_cache=True)
        hidden = out.last_hidden_state[[r for r, _ in reads], [p for _, p in reads]]
        if not keep:
            return hidden, []
        return hidden, [(layer.keys[:, :, start:], layer.values[:, :, start:]) for layer in out.cache.layers]


def default_inverse_frequencies(config):
    """The rotary embedding's inverse frequencies, base ** (-2i / head_dim), as transformers' default
    rope computes them (in float32, from an integer range); tests/model/test_decoder.py holds the two
    equal bit for bit."""
    import torch

    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return 1.0 / (config.rope_parameters["rope_theta"] ** (torch.arange(0, head_dim, 2, dtype=torch.float) / head_dim))


class LlamaDecoder:
    """transformers' LlamaModel forward for the configurations it is written for (see ``computes``).

    Built from a transformers module (``from_module``) or straight from a safetensors file
    (``from_safetensors``): the model server takes the second, which never imports transformers'
    modelling code (with sympy, scipy and torch.distributed behind it, 116 MiB of a process) and keeps
    q, k and v once, in their joined product, not also apart as the module holds them."""

    @staticmethod
    def computes(config) -> bool:
        rope = getattr(config, "rope_parameters", None) or {}
        return getattr(config, "model_type", None) == "llama" and (
            not getattr(config, "attention_bias", False) and not getattr(config, "mlp_bias", False)
            and config.hidden_act == "silu" and getattr(config, "pretraining_tp", 1) == 1
            and rope.get("rope_type", "default") == "default"
        )

    def __init__(self, config, weight, inv_freq, attention_scaling: float = 1.0):
        """``weight(name)``: the tensor transformers names ``name`` ("model.norm.weight"), each asked once."""
        import torch

        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        self.embed = weight("model.embed_tokens.weight")
        self.final_norm = weight("model.norm.weight")
        self.head = self.embed if getattr(config, "tie_word_embeddings", False) else weight("lm_head.weight")
        self.vocabulary = self.head.shape[0]
        self.inv_freq, self.attention_scaling = inv_freq, attention_scaling
        # Called before each layer (the model server's core_share.CoreShare.before_pass): a pass on two
        # threads whose second core another process takes mid-pass goes on one from the next layer.
        self.between_layers = None
        self.layers = []
        for n in range(config.num_hidden_layers):
            at = f"model.layers.{n}."
            self.layers.append((
                weight(at + "input_layernorm.weight"),
                torch.cat([weight(at + f"self_attn.{name}_proj.weight") for name in "qkv"]).contiguous(),
                weight(at + "self_attn.o_proj.weight"), weight(at + "post_attention_layernorm.weight"),
                weight(at + "mlp.gate_proj.weight"), weight(at + "mlp.up_proj.weight"),
                weight(at + "mlp.down_proj.weight")))

    @classmethod
    def from_module(cls, model):
        parameters = dict(model.named_parameters(remove_duplicate=False))
        rotary = model.model.rotary_emb
        return cls(model.config, parameters.__getitem__, rotary.inv_freq, getattr(rotary, "attention_scaling", 1.0))

    @classmethod
    def from_safetensors(cls, path, config, device, dtype):
        """The decoder of a one-file safetensors checkpoint in transformers' names."""
        from safetensors import safe_open

        # A tensor safetensors gives shares the file's mapping; a copy of its own lets the mapping go when
        # the file closes, and with it q, k and v apart (read once into their joined product).
        with safe_open(str(path), framework="pt", device="cpu") as checkpoint:
            return cls(config, lambda name: checkpoint.get_tensor(name).to(device=device, dtype=dtype, copy=True),
                       default_inverse_frequencies(config).to(device))

    def logits(self, hidden):
        """The language-model head over last hidden states [n, width]: logits [n, vocabulary]."""
        import torch.nn.functional as F

        return F.linear(hidden, self.head)

    def _norm(self, x, weight):
        import torch

        x32 = x.float()
        return weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)

    def _rotary(self, positions, dtype):
        import torch

        freqs = positions.float()[:, None] * self.inv_freq.float()[None, :]
        angles = torch.cat((freqs, freqs), dim=-1)[:, None]  # [tokens, 1 (every head), head_dim]
        return (angles.cos() * self.attention_scaling).to(dtype), (angles.sin() * self.attention_scaling).to(dtype)

    @staticmethod
    def _rotate(x, cos, sin):
        import torch

        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    def _attend(self, q, keys, values, mask=None):
        """Attention of queries [n, heads, head_dim] to keys and values [1, kv_heads, m, head_dim]
        under an additive ``mask`` [n, m] (None: every query sees every key), with each query's
        log-sum-exp of its scores [n, heads], so that attention to two sets of keys can be combined.

        Grouped queries: the ``heads // kv_heads`` query heads that share a key head are stacked as
        more query rows of one product. On the CPU this is torch's own flash-attention kernel
        (what ``scaled_dot_product_attention`` runs there, which also returns the log-sum-exp);
        elsewhere ``written_out_attention``."""
        import torch

        n, heads, head_dim = q.shape
        kv_heads = keys.shape[1]
        group = heads // kv_heads
        stacked = q.view(n, kv_heads, group, head_dim).permute(1, 2, 0, 3).reshape(1, kv_heads, group * n, head_dim)
        stacked_mask = None if mask is None else mask.repeat(group, 1)
        if q.device.type == "cpu":
            out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
                stacked, keys, values, attn_mask=stacked_mask)
        else:
            out, lse = written_out_attention(stacked, keys, values, stacked_mask)
        out = out.reshape(kv_heads, group, n, head_dim).permute(2, 0, 1, 3).reshape(n, heads, head_dim)
        return out, lse.reshape(kv_heads, group, n).permute(2, 0, 1).reshape(n, heads)

    @staticmethod
    def _read_plan(reads, offsets, lengths, causal, device):
        """Where the last layer reads: each read's index among the pass's tokens, the reads' order
        grouped by row, and each row's read queries ((first, end) in that order, the row, its mask)."""
        import torch

        read_index = torch.tensor([offsets[r] + p for r, p in reads], dtype=torch.long, device=device)
        read_rows = {}  # row: (indices into reads, positions in the row), for the last layer's attention
        for n, (r, p) in enumerate(reads):
            read_rows.setdefault(r, ([], []))
            read_rows[r][0].append(n)
            read_rows[r][1].append(p)
        read_order = torch.tensor([n for got, _ in read_rows.values() for n in got], dtype=torch.long, device=device)
        ends = [0]
        for got, _ in read_rows.values():
            ends.append(ends[-1] + len(got))
        read_queries = [(ends[n], ends[n + 1], r, causal[wanted][:, :lengths[r]])
                        for n, (r, (_, wanted)) in enumerate(read_rows.items())]
        return read_index, read_order, read_queries

    def _attend_rows(self, q, k, v, queries, offsets, past_layer, start: int):
        """One layer's attention for ``queries``: each row's queries to its own row's keys, combined
        by their log-sum-exps with attention to the ``past_layer``'s prefix (None: no prefix)."""
        import torch

        parts = [self._attend(q[first:end], k[:, :, offsets[r]:offsets[r + 1]], v[:, :, offsets[r]:offsets[r + 1]],
                              row_mask) for first, end, r, row_mask in queries]
        attended, lse = torch.cat([o for o, _ in parts]), torch.cat([m for _, m in parts])
        if past_layer is not None:
            before, before_lse = self._attend(q, past_layer[0][:, :, :start], past_layer[1][:, :, :start])
            both = torch.logaddexp(before_lse, lse)
            attended = before * (before_lse - both).exp()[..., None] + attended * (lse - both).exp()[..., None]
        return attended

    def __call__(self, rows, start: int, past=None, reads=(), keep: bool = True):
        import torch
        import torch.nn.functional as F

        heads, kv_heads, head_dim = self.heads, self.kv_heads, self.head_dim
        device = self.embed.device
        # The rows' tokens one after another, with no padding: every product but attention is per
        # token, so a pass of several short questions costs what their tokens cost, in bigger
        # matrix products than each would make alone (the weights are read once for all of them).
        lengths = [len(row) for row in rows]
        offsets = [0]
        for n in lengths:
            offsets.append(offsets[-1] + n)
        ids = torch.tensor([token for row in rows for token in row], dtype=torch.long, device=device)
        positions = torch.cat([torch.arange(start, start + n, device=device) for n in lengths])
        x = F.embedding(ids, self.embed)
        cos, sin = self._rotary(positions, x.dtype)
        # Attention in two parts, combined by their log-sum-exps: every query sees the whole prefix
        # (one unmasked product for all the rows' queries together, since they share it), and its
        # own row's tokens up to itself (row by row, under the top-left [n, n] of this mask).
        width = max(lengths)
        causal = torch.full((width, width), float("-inf"), dtype=x.dtype, device=device).triu(1)
        # Each row's queries: (first, end) in q, the row, its own-token mask; every token in the
        # layers before the last, the reads (grouped by row) in the last.
        row_queries = [(offsets[r], offsets[r + 1], r, causal[:n, :n]) for r, n in enumerate(lengths)]
        read_index, read_order, read_queries = self._read_plan(reads, offsets, lengths, causal, device)
        own, last = [], len(self.layers) - 1
        for i, (norm_in, qkv, out_proj, norm_mid, gate, up, down) in enumerate(self.layers):
            if self.between_layers is not None:
                self.between_layers()
            h = self._norm(x, norm_in)
            if i < last:
                q, k, v = F.linear(h, qkv).split((heads * head_dim, kv_heads * head_dim, kv_heads * head_dim), dim=-1)
                q = self._rotate(q.view(-1, heads, head_dim), cos, sin)
                queries = row_queries
            else:
                # The last layer's output is read only at ``reads``: every token's keys and values are
                # still needed (those tokens attend to them), but only the read positions' queries,
                # attention and MLP.
                k, v = F.linear(h, qkv[heads * head_dim:]).split((kv_heads * head_dim, kv_heads * head_dim), dim=-1)
                at = read_index[read_order]
                q = self._rotate(F.linear(h[at], qkv[:heads * head_dim]).view(-1, heads, head_dim), cos[at], sin[at])
                queries = read_queries
            k = self._rotate(k.view(-1, kv_heads, head_dim), cos, sin).transpose(0, 1).unsqueeze(0)
            v = v.view(-1, kv_heads, head_dim).transpose(0, 1).unsqueeze(0)  # [1, kv_heads, tokens, head_dim]
            if keep:  # copies of their own: v is a view of this layer's whole q, k, v product, 5 times its size
                own.append((k.contiguous(), v.contiguous()))
            if i == last and not reads:  # a prefix's pass: only its keys and values are kept
                return x.new_zeros((0, x.shape[-1])), own
            attended = self._attend_rows(q, k, v, queries, offsets, past[i] if past else None, start)
            attended = attended.reshape(-1, heads * head_dim).to(x.dtype)
            if i < last:
                x = x + F.linear(attended, out_proj)
            else:  # back from row order to the order of ``reads``
                x = x[read_index] + F.linear(attended[torch.argsort(read_order)], out_proj)
            h = self._norm(x, norm_mid)
            x = x + F.linear(F.silu(F.linear(h, gate)) * F.linear(h, up), down)
        return self._norm(x, self.final_norm), own
