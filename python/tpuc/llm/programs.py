"""The programs a server runs, as PyTorch modules around a transformers causal LM.

A server keeps `B` sequences in flight, each in a *slot*: row `b` of every layer's key
and value cache (`[B, H_kv, L, D]`, registered buffers, so `torch.export` records them
as mutated state that tpuc donates and aliases). Two kinds of program share that cache:

- `Prefill` (one per token bucket `T`): one sequence's chunk of `T` tokens (`length`
  of them real, the rest padding) at positions `start .. start + T` of slot `slot`. It
  writes the chunk's keys and values into that slot and samples the token that follows
  the chunk's last real token.
- `Decode`: one token for every slot at once, each at its own position `positions[b]`
  (sequences of different lengths share the step). It writes each slot's new key and
  value at its position and samples each slot's next token.

Masks are built in the program from the positions (a key at position `j` is seen from
position `p` when `j <= p`, and `j > p - window` on sliding-window layers, `j` in `p`'s
chunk on chunked ones), so no mask is read from memory; they are handed to the model as prepared 4D masks, which transformers'
mask functions return unchanged. The architecture's own attention runs on them: any
decoder that takes a `Cache` object serves this way, not one hand-written model.

Padding and free slots write keys and values only where nothing reads them before they
are written again: a chunk's padding at positions past its real tokens (the next chunk
or decode step writes there first), a free slot at position `L - 1` of its own row
(`Decode.FREE_POSITION`; a sequence writes its last position itself before reading it).

Sampling runs in the same program (`sample`): a step returns token ids, not logits.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers.cache_utils import Cache, CacheLayerMixin


class SlotLayer(CacheLayerMixin):
    """One layer's keys and values for `B` slots, written where the owning `SlotCache`
    says (`cache.where`), read whole (the mask hides what a position must not see)."""

    is_compileable = True
    is_sliding = False

    def __init__(self, owner: "SlotCache", buffers: nn.Module, index: int, kind: tuple[str, int | None]):
        super().__init__()
        # The buffers are read from their module at each use: `torch.export` then sees
        # the module's buffers (mutated state), not tensor constants.
        self.owner, self.buffers, self.index = owner, buffers, index
        self.is_sliding = kind[0] != "full_attention"
        # What code that inspects a cache layer directly sees: nothing cached in the
        # layer object itself (Mllama asks whether a cross-attention layer holds states).
        self.keys = self.values = torch.empty(0)
        self.is_initialized = True

    def lazy_initialization(self, key_states, value_states):  # buffers exist from the start
        pass

    def update(self, key_states, value_states, *args, **kwargs):
        keys = getattr(self.buffers, f"cache_keys_{self.index}")
        values = getattr(self.buffers, f"cache_values_{self.index}")
        key_states, value_states = key_states.to(keys.dtype), value_states.to(values.dtype)
        where = self.owner.where
        if where[0] == "decode":
            # [B, H, 1, D] at each row's own position (keys and values may differ in
            # heads or size: multi-head latent attention).
            at = where[1].view(-1, 1, 1, 1)
            keys.scatter_(2, at.expand_as(key_states), key_states)
            values.scatter_(2, at.expand_as(value_states), value_states)
            return keys, values
        _, slot, positions = where
        # One slot: [1, H, T, D] into its row at `positions`, the row read back whole.
        row_keys = keys.index_select(0, slot).index_copy(2, positions, key_states)
        row_values = values.index_select(0, slot).index_copy(2, positions, value_states)
        keys.index_copy_(0, slot, row_keys)
        values.index_copy_(0, slot, row_values)
        return row_keys, row_values

    def get_mask_sizes(self, query_length: int):
        return self.get_max_length(), 0

    def get_seq_length(self) -> int:
        return 0

    def get_max_length(self) -> int:
        return getattr(self.buffers, f"cache_keys_{self.index}").shape[2]


class SlotCache(Cache):
    """A transformers `Cache` over per-slot buffers; `where` is set by the program
    before each forward: `("decode", positions[B])` or `("prefill", slot[1],
    positions[T])`."""

    def __init__(self, buffers: nn.Module, windows: list[tuple[str, int | None]]):
        from transformers.cache_utils import DummyLayer

        super().__init__(
            layers=[
                DummyLayer() if buffers.shared[i] else SlotLayer(self, buffers, i, w) for i, w in enumerate(windows)
            ]
        )
        self.where: tuple = ("decode", None)


def layer_windows(config) -> list[tuple[str, int | None]]:
    """Each layer's attention kind, as transformers names it, with its size:
    `("full_attention", None)`, `("sliding_attention", window)` (a key is seen from the
    `window` positions up to the query's) or `("chunked_attention", chunk)` (from the
    query's own chunk of `chunk` positions, Llama 4)."""
    text = config.get_text_config(decoder=True)
    n = text.num_hidden_layers
    types = getattr(text, "layer_types", None)
    window = getattr(text, "sliding_window", None)
    chunk = getattr(text, "attention_chunk_size", None)
    if types is None:
        slides = window and getattr(text, "use_sliding_window", True)
        return [("sliding_attention", window) if slides else ("full_attention", None)] * n
    out = []
    for t in types[:n]:
        if t == "full_attention":
            out.append((t, None))
        elif t == "sliding_attention" and window:
            out.append((t, window))
        elif t == "chunked_attention" and chunk:
            out.append((t, chunk))
        else:
            raise NotImplementedError(
                f"layer type {t!r}: tpuc.llm serves full, sliding-window and chunked attention layers only"
            )
    return out


def kv_shapes(model) -> list[tuple[tuple[int, ...], tuple[int, ...]] | None]:
    """Each layer's key and value shapes for one token of one sequence, `[1, H, 1, D]`,
    read from the model itself: a one-token forward with transformers' dynamic cache
    (head counts and sizes differ by architecture, and by layer in some)."""
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    device = next(model.parameters()).device  # `meta` for a model built without weights
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 1, dtype=torch.int64, device=device), cache=cache, use_cache=True)
    from transformers.cache_utils import DummyLayer

    shapes = []
    for layer in cache.layers:
        if isinstance(layer, DummyLayer):
            # A layer that reads another's cache (Gemma 3n's shared KV) holds none.
            shapes.append(None)
            continue
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if not isinstance(keys, torch.Tensor) or keys.dim() != 4 or not isinstance(values, torch.Tensor):
            raise NotImplementedError(
                f"cache layer {type(layer).__name__} holds no [B, H, T, D] keys and values: "
                "tpuc.llm serves attention caches only"
            )
        shapes.append((tuple(keys.shape), tuple(values.shape)))
    return shapes


def _masks(query_positions: torch.Tensor, key_length: int, kinds, dtype):
    """Additive masks `[R, 1, Q, L]` for query positions `[R, Q]`: what the model takes
    as `attention_mask` (one tensor when every layer attends alike, else one per layer
    kind, as transformers' mask mapping)."""
    keys = torch.arange(key_length, device=query_positions.device)
    q = query_positions[:, None, :, None]
    seen = keys <= q
    low = torch.finfo(dtype).min
    masks = {}
    for kind, size in sorted(set(kinds), key=str):
        if kind in masks:
            raise NotImplementedError(f"{kind} layers of different sizes")
        if kind == "sliding_attention":
            allowed = seen & (keys > q - size)
        elif kind == "chunked_attention":
            allowed = seen & (torch.div(keys, size, rounding_mode="floor") == torch.div(q, size, rounding_mode="floor"))
        else:
            allowed = seen
        masks[kind] = torch.where(allowed, 0.0, low).to(dtype)
    if len(masks) == 1:
        return next(iter(masks.values()))
    return masks


def _mix(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (xorshift-multiply rounds) computed in int64; the values
    are in [0, 2^32), so a right shift by k is a floor division by 2^k."""
    m = 0xFFFFFFFF
    x = x & m
    x = x ^ (x // (1 << 16))
    x = (x * 0x7FEB352D) & m
    x = x ^ (x // (1 << 15))
    x = (x * 0x846CA68B) & m
    return x ^ (x // (1 << 16))


def sample(logits, temperature, top_k, top_p, min_p, seed, step):
    """Next tokens `[R]` from logits `[R, V]`, and each token's log-probability under the
    model's distribution. Per row: `temperature <= 0` is greedy (argmax, the first of
    ties as torch.argmax); else the logits divided by the temperature, then the `top_k`
    most likely (0: all), the smallest prefix of them whose probability reaches `top_p`
    (1: all), and those at least `min_p` times the most likely (0: all), sampled by the
    Gumbel-max trick with noise hashed from `(seed, step, token id)`: the same seed and
    step give the same token on every device and run."""
    logits = logits.float()
    vocab = logits.shape[-1]
    logprobs = torch.log_softmax(logits, dim=-1)
    greedy = torch.argmax(logits, dim=-1)

    t = torch.where(temperature > 0, temperature, torch.ones_like(temperature))
    scaled = logits / t[:, None]
    ordered, order = torch.sort(scaled, dim=-1, descending=True, stable=True)
    probs = torch.softmax(ordered, dim=-1)
    rank = torch.arange(vocab, device=logits.device)[None, :]
    k = torch.where(top_k > 0, top_k, torch.full_like(top_k, vocab))
    keep = rank < k[:, None]
    before = torch.cumsum(probs, dim=-1) - probs
    keep = keep & (before < top_p[:, None])
    keep = keep & (probs >= min_p[:, None] * probs[:, :1])
    keep = keep | (rank == 0)

    ids = order.to(torch.int64)
    x = _mix((seed & 0xFFFFFFFF)[:, None] * 0x9E3779B1 + (step & 0xFFFFFFFF)[:, None])
    x = _mix(x + ids * 0x85EBCA77)
    u = ((x // 256).to(torch.float32) + 0.5) * (1.0 / 16777216.0)
    noisy = torch.where(keep, ordered - torch.log(-torch.log(u)), torch.full_like(ordered, float("-inf")))
    chosen = torch.gather(ids, 1, torch.argmax(noisy, dim=-1, keepdim=True))[:, 0]

    tokens = torch.where(temperature > 0, chosen, greedy)
    return tokens, torch.gather(logprobs, 1, tokens[:, None])[:, 0]


class Programs(nn.Module):
    """The model, its slot cache (`[B, H_kv, L, D]` buffers per layer) and the two
    entry points; `Decode(programs)` and `Prefill(programs)` are what `torch.export`
    takes (the same parameter and buffer names in every program)."""

    FREE_POSITION = -1  # a free slot's decode position: L - 1 (see the module's text)

    def __init__(self, model, max_batch: int, max_len: int):
        super().__init__()
        import inspect

        if "position_ids" not in inspect.signature(model.forward).parameters:
            raise NotImplementedError(
                f"{type(model).__name__} takes no position_ids (its positions follow the cache's length): "
                "sequences at different positions cannot share its decode step"
            )
        self.model = model
        self.windows = layer_windows(model.config)
        dtype, device = next(model.parameters()).dtype, next(model.parameters()).device
        shapes = kv_shapes(model)
        if len(shapes) != len(self.windows):
            raise NotImplementedError(
                f"the model caches {len(shapes)} layers, its config lists {len(self.windows)}"
            )
        self.kv_shapes = []
        self.shared = [shape is None for shape in shapes]
        for i, shape in enumerate(shapes):
            if shape is None:
                continue
            k, v = shape
            keys = (max_batch, k[1], max_len, k[3])
            values = (max_batch, v[1], max_len, v[3])
            self.register_buffer(f"cache_keys_{i}", torch.zeros(keys, dtype=dtype, device=device))
            self.register_buffer(f"cache_values_{i}", torch.zeros(values, dtype=dtype, device=device))
            self.kv_shapes.append((keys, values))
        self.cache = SlotCache(self, self.windows)
        self.max_batch, self.max_len, self.dtype = max_batch, max_len, dtype

    def _logits(self, tokens, positions, where):
        self.cache.where = where
        masks = _masks(positions, self.max_len, self.windows, self.dtype)
        out = self.model(
            input_ids=tokens, attention_mask=masks, position_ids=positions, cache=self.cache, use_cache=True
        )
        return out.logits

    def decode(self, tokens, positions, temperature, top_k, top_p, min_p, seed):
        """One step over every slot: `tokens [B]` (each slot's last token) at
        `positions [B]`; each slot's next token `[B]` and its log-probability."""
        logits = self._logits(tokens[:, None], positions[:, None], ("decode", positions))
        return sample(logits[:, -1], temperature, top_k, top_p, min_p, seed, positions)

    def prefill(self, tokens, slot, start, length, temperature, top_k, top_p, min_p, seed):
        """One chunk of one sequence: `tokens [1, T]` (`length [1]` of them real) at
        positions `start [1] ..`, into slot `slot [1]`; the token that follows the
        chunk's last real token `[1]` and its log-probability."""
        positions = start + torch.arange(tokens.shape[1], device=tokens.device)
        logits = self._logits(tokens, positions[None, :], ("prefill", slot, positions))
        last = torch.index_select(logits[0], 0, length - 1)
        return sample(last, temperature, top_k, top_p, min_p, seed, start + length - 1)


class Decode(nn.Module):
    def __init__(self, programs: Programs):
        super().__init__()
        self.programs = programs

    def forward(self, tokens, positions, temperature, top_k, top_p, min_p, seed):
        return self.programs.decode(tokens, positions, temperature, top_k, top_p, min_p, seed)


class Prefill(nn.Module):
    def __init__(self, programs: Programs):
        super().__init__()
        self.programs = programs

    def forward(self, tokens, slot, start, length, temperature, top_k, top_p, min_p, seed):
        return self.programs.prefill(tokens, slot, start, length, temperature, top_k, top_p, min_p, seed)


FORMAT = "tpuc-serve/1"


def serve_manifest(model, programs: Programs, buckets, listed: dict, tokenizer_files, compile_options) -> dict:
    """`serve.json`: what `tpuc serve` (runtime `serving.rs`) reads. `listed`:
    `{"decode": {"path"}, "prefill": [{"tokens", "path"}]}`."""
    config = model.config
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None) if gen is not None else None
    if eos is None:
        eos = getattr(config, "eos_token_id", None)
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    text = config.get_text_config(decoder=True)
    return {
        "format": FORMAT,
        "model": getattr(config, "_name_or_path", "") or type(model).__name__,
        "architecture": type(model).__name__,
        "dtype": str(programs.dtype).removeprefix("torch."),
        "vocab_size": text.vocab_size,
        "max_batch": programs.max_batch,
        "max_len": programs.max_len,
        "prefill_buckets": list(buckets),
        "free_position": programs.max_len - 1,
        "kv_cache": {
            "layers": len(programs.kv_shapes),
            "shape": list(programs.kv_shapes[0][0]),
            "bytes": sum(
                (torch.Size(k).numel() + torch.Size(v).numel()) * programs.dtype.itemsize
                for k, v in programs.kv_shapes
            ),
        },
        "programs": listed,
        "eos_token_ids": eos,
        "tokenizer_files": list(tokenizer_files),
        "compile_options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in compile_options.items()},
    }


def export_programs(programs: Programs, buckets) -> dict:
    """`{"decode": ExportedProgram, "prefill_T": ExportedProgram, ...}`: the entry
    modules exported with example inputs of their shapes, on the model's device (`meta`
    for a model built without weights). Every example is its own tensor: torch.export
    would make one input of a tensor passed twice."""
    device = next(programs.model.parameters()).device
    i64, f32 = torch.int64, torch.float32

    def ids(*shape):
        return torch.zeros(*shape, dtype=i64, device=device)

    def sampling(n):
        return (torch.zeros(n, dtype=f32, device=device), ids(n), torch.ones(n, dtype=f32, device=device),
                torch.zeros(n, dtype=f32, device=device), ids(n))

    b = programs.max_batch
    out = {}
    with torch.no_grad():
        out["decode"] = torch.export.export(Decode(programs), (ids(b), ids(b), *sampling(b)), strict=False)
        for t in buckets:
            args = (ids(1, t), ids(1), ids(1), torch.ones(1, dtype=i64, device=device), *sampling(1))
            out[f"prefill_{t}"] = torch.export.export(Prefill(programs), args, strict=False)
    return out
