"""The model's decoder stack run over a cached prefix: the forward pass of the scorer's fast path.

``decoder_for(model)`` returns one of two objects with the same call,
``decoder(ids, start, past, reads) -> (hidden, layers)``: ``ids`` [rows, tokens] placed at
positions ``start``, ``start + 1``, … on top of ``past`` (per layer (keys, values) of one prefix,
[1, heads, ≥ start, head_dim], shared by every row); back come the last hidden states at
``reads``, (row, token) pairs [len(reads), width], and this pass's own keys and values (a
prefix's cache, computed with no reads). Rows are right-padded: a token
attends to the prefix and to the tokens before it in its row, so padding after the last real
token changes nothing a real token computes, and no padding mask is needed.

* ``LlamaDecoder``, for the Llama family (SmolLM2 is one): the same arithmetic as transformers'
  ``LlamaModel`` (float32 RMSNorm, rotary embeddings from the model's own ``inv_freq``, grouped
  query attention by ``scaled_dot_product_attention``), written out so that a question's pass does
  less: q, k and v in one product, the causal mask built once per pass rather than once per
  layer, no cache objects, and in the last layer only the read positions' queries, attention and
  MLP (the others' keys and values are all that later tokens use). On this project's CPU it
  scores the same questions 7–14 % faster (bench/scoring.py).
* ``TransformersDecoder``, any other causal LM: transformers' own forward with a ``DynamicCache``.

Neither changes a number the reference path computes by more than float rounding:
tests/test_fast_scoring.py holds the scorer on either to transformers' full-prompt forward within
1e-5, and tests/test_decoder.py holds the two decoders to each other.
"""
from __future__ import annotations


def decoder_for(model):
    """The lean Llama decoder where the model is one it computes exactly, transformers' otherwise."""
    return LlamaDecoder(model) if LlamaDecoder.computes(model) else TransformersDecoder(model)


class TransformersDecoder:
    def __init__(self, model):
        self.model = model

    def __call__(self, ids, start: int, past=None, reads=()):
        import torch
        from transformers import DynamicCache

        rows, width = ids.shape
        positions = torch.arange(start, start + width, device=ids.device).unsqueeze(0).expand(rows, -1)
        cache = DynamicCache(ddp_cache_data=[
            (k[:, :, :start].expand(rows, -1, -1, -1), v[:, :, :start].expand(rows, -1, -1, -1)) for k, v in past
        ]) if past else DynamicCache()
        out = self.model.model(input_ids=ids, position_ids=positions, cache=cache, use_cache=True)
        hidden = out.last_hidden_state[[r for r, _ in reads], [p for _, p in reads]]
        return hidden, [(layer.keys[:, :, start:], layer.values[:, :, start:]) for layer in out.cache.layers]


class LlamaDecoder:
    """transformers' LlamaModel forward for the configurations it is written for (see ``computes``)."""

    @staticmethod
    def computes(model) -> bool:
        config = model.config
        rope = getattr(config, "rope_parameters", None) or {}
        return config.model_type == "llama" and (
            not getattr(config, "attention_bias", False) and not getattr(config, "mlp_bias", False)
            and config.hidden_act == "silu" and getattr(config, "pretraining_tp", 1) == 1
            and rope.get("rope_type", "default") == "default"
        )

    def __init__(self, model):
        import torch

        config = model.config
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        stack = model.model
        self.embed = stack.embed_tokens.weight
        self.final_norm = stack.norm.weight
        self.inv_freq = stack.rotary_emb.inv_freq
        self.attention_scaling = getattr(stack.rotary_emb, "attention_scaling", 1.0)
        self.layers = [
            (layer.input_layernorm.weight,
             torch.cat([layer.self_attn.q_proj.weight, layer.self_attn.k_proj.weight,
                        layer.self_attn.v_proj.weight]).contiguous(),
             layer.self_attn.o_proj.weight, layer.post_attention_layernorm.weight,
             layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight, layer.mlp.down_proj.weight)
            for layer in stack.layers
        ]

    def _norm(self, x, weight):
        import torch

        x32 = x.float()
        return weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)

    def _rotary(self, start: int, width: int, dtype, device):
        import torch

        positions = torch.arange(start, start + width, dtype=torch.float32, device=device)
        freqs = positions[:, None] * self.inv_freq.float()[None, :]
        angles = torch.cat((freqs, freqs), dim=-1)
        return ((angles.cos() * self.attention_scaling).to(dtype), (angles.sin() * self.attention_scaling).to(dtype))

    @staticmethod
    def _rotate(x, cos, sin):
        import torch

        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    def __call__(self, ids, start: int, past=None, reads=()):
        import torch
        import torch.nn.functional as F

        rows, width = ids.shape
        heads, kv_heads, head_dim = self.heads, self.kv_heads, self.head_dim
        x = F.embedding(ids, self.embed)
        cos, sin = self._rotary(start, width, x.dtype, x.device)
        # Token i (at position start + i) sees keys 0 … start + i: the prefix and its row's earlier tokens.
        mask = torch.full((width, start + width), float("-inf"), dtype=x.dtype, device=x.device).triu(start + 1)
        read_rows = torch.tensor([r for r, _ in reads], dtype=torch.long, device=x.device)
        read_positions = torch.tensor([p for _, p in reads], dtype=torch.long, device=x.device)
        own, last = [], len(self.layers) - 1
        for i, (norm_in, qkv, out_proj, norm_mid, gate, up, down) in enumerate(self.layers):
            h = self._norm(x, norm_in)
            if i < last:
                q, k, v = F.linear(h, qkv).split((heads * head_dim, kv_heads * head_dim, kv_heads * head_dim), dim=-1)
                q = self._rotate(q.view(rows, width, heads, head_dim).transpose(1, 2), cos, sin)
            else:
                # The last layer's output is read only at ``reads``: every token's keys and values are
                # still needed (those tokens attend to them), but only the read positions' queries,
                # attention and MLP; one query per row of the attention below.
                k, v = F.linear(h, qkv[heads * head_dim:]).split((kv_heads * head_dim, kv_heads * head_dim), dim=-1)
                q = F.linear(h[read_rows, read_positions], qkv[:heads * head_dim]).view(-1, heads, 1, head_dim)
                q = self._rotate(q, cos[read_positions, None, None], sin[read_positions, None, None])
            k = self._rotate(k.view(rows, width, kv_heads, head_dim).transpose(1, 2), cos, sin)
            v = v.view(rows, width, kv_heads, head_dim).transpose(1, 2)
            own.append((k, v))
            if past:
                k = torch.cat((past[i][0][:, :, :start].expand(rows, -1, -1, -1), k), dim=2)
                v = torch.cat((past[i][1][:, :, :start].expand(rows, -1, -1, -1), v), dim=2)
            if i < last:
                attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=heads != kv_heads)
                x = x + F.linear(attended.transpose(1, 2).reshape(rows, width, heads * head_dim), out_proj)
            elif not reads:  # a prefix's pass: only its keys and values are kept
                return x.new_zeros((0, x.shape[-1])), own
            else:
                attended = F.scaled_dot_product_attention(q, k[read_rows], v[read_rows], enable_gqa=heads != kv_heads,
                                                          attn_mask=mask[read_positions, None, None])
                x = x[read_rows, read_positions] + F.linear(attended.reshape(-1, heads * head_dim), out_proj)
            h = self._norm(x, norm_mid)
            x = x + F.linear(F.silu(F.linear(h, gate)) * F.linear(h, up), down)
        return self._norm(x, self.final_norm), own
