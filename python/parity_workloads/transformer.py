# SPDX-License-Identifier: Apache-2.0
"""transformer: a causal language model: token embedding plus a learned position embedding
(index_select), nn.TransformerEncoderLayers with dropout and a causal mask, an LSTM, and a
Linear head scored with cross-entropy.

torch 1.13's CPU autocast cannot run LayerNorm on the bfloat16 output of a Linear; here every
LayerNorm (post-norm, inside the encoder layers) follows a residual add whose result is
float32, so the model runs under CPU bfloat16 autocast on 1.13 as on later versions; the LSTM
runs through ATen's own cells on every version (see forward).
"""
import contextlib

import torch
import torch.nn.functional as F

from .common import Workload, build

CONFIGS = {
    "tiny": dict(vocab=64, dim=16, heads=2, ff=32, layers=2, hidden=16, seq=8, batch=4),
    "small": dict(vocab=1000, dim=64, heads=4, ff=128, layers=2, hidden=64, seq=32, batch=16),
    "base": dict(vocab=8000, dim=256, heads=8, ff=1024, layers=4, hidden=256, seq=128,
                 batch=32),
}


@contextlib.contextmanager
def _without_onednn():
    """oneDNN (mkldnn) off within the block, as torch.backends.mkldnn.flags(enabled=False)
    does without its TF32 switch (which warns on builds without Intel GPU support)."""
    get = getattr(torch._C, "_get_mkldnn_enabled", None)
    put = getattr(torch._C, "_set_mkldnn_enabled", None)
    if get is None or put is None:
        with torch.backends.mkldnn.flags(enabled=False):
            yield
        return
    before = get()
    put(False)
    try:
        yield
    finally:
        put(before)


class LanguageModel(torch.nn.Module):
    """forward(tokens [B, S]) -> logits [B, S, vocab]."""

    def __init__(self, vocab, dim, heads, ff, layers, hidden, seq):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.position = torch.nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.register_buffer("positions", torch.arange(seq), persistent=False)
        causal = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("causal", causal, persistent=False)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.1, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.lstm = torch.nn.LSTM(dim, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens):
        s = tokens.shape[1]
        x = self.embed(tokens) + self.position.index_select(0, self.positions[:s])
        x = self.encoder(x, mask=self.causal[:s, :s])
        # The LSTM through ATen's own cells on every torch, as 1.13 runs it on the CPU: torch
        # 2.x would run oneDNN's fused LSTM (mkldnn_rnn_layer), which under bfloat16 autocast
        # fails on CPUs without AVX-512 ("could not create a primitive descriptor for the LSTM
        # forward propagation primitive").
        with _without_onednn():
            x, _ = self.lstm(x)
        return self.head(x)


def loss_fn(logits, target):
    """Cross-entropy of the next-token logits."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def make(size="tiny", seed=0, batch_size=None):
    """The transformer Workload (see module docstring)."""
    c = CONFIGS.get(size)
    model = build("transformer", size, seed, lambda: LanguageModel(
        c["vocab"], c["dim"], c["heads"], c["ff"], c["layers"], c["hidden"], c["seq"]))
    batch = batch_size or c["batch"]

    # Text a model can learn: Zipf-distributed tokens, every second one the fixed successor
    # (7 t + 3 mod vocab) of the token before it.
    zipf = 1.0 / torch.arange(1, c["vocab"] + 1, dtype=torch.float64)

    def make_batch(gen):
        n = c["seq"] + 1
        tokens = torch.multinomial(zipf.expand(batch, -1), n, replacement=True, generator=gen)
        tokens[:, 1::2] = (tokens[:, 0::2][:, :n // 2] * 7 + 3) % c["vocab"]
        return (tokens[:, :-1].contiguous(),), tokens[:, 1:].contiguous()

    return Workload("transformer", size, model, loss_fn, make_batch, batch, seed,
                    tokens_per_sample=c["seq"])
