# SPDX-License-Identifier: Apache-2.0
"""hf-llama and hf-bert: Hugging Face transformers models built from config objects, randomly
initialised (nothing is downloaded: no hub id, no from_pretrained), called with keyword
arguments as transformers' users call them.

hf-llama: LlamaForCausalLM from a LlamaConfig: RMSNorm, rotary position embeddings, SDPA
attention with grouped-query attention (num_key_value_heads < num_attention_heads), SiLU-gated
MLP, untied LM head; model(input_ids=...).logits scored with next-token cross-entropy on
learnable synthetic text (transformer.py's: Zipf tokens, every second one a fixed successor
of the one before). Optimizer: AdamW, fused=True (torch's fused kernel, CPU included).

hf-bert: BertForSequenceClassification from a BertConfig (absolute position and token-type
embeddings, LayerNorm, GELU, SDPA attention with a padding mask, dropout, the pooler and a
classification head); model(input_ids=..., attention_mask=..., token_type_ids=...).logits
scored with cross-entropy on synthetic labelled sequences of varying length, padded: [CLS]
tokens [SEP] [PAD]..., a bag-of-words task: 80% of the tokens of a sequence labelled 1 from
the upper half of the vocabulary, 80% of those of a sequence labelled 0 from the lower half.
Optimizer: AdamW, foreach=True, lr 3e-3.

Both need transformers (the torch 2.x environment, scripts/venv); it is imported when a
workload is built, so this module imports on any torch.
"""
import torch
import torch.nn.functional as F

from .common import Workload, build, require

LLAMA = {
    "tiny": dict(vocab=64, hidden=16, ff=32, layers=2, heads=4, kv_heads=2, seq=8, batch=4),
    "small": dict(vocab=1000, hidden=64, ff=172, layers=2, heads=4, kv_heads=2, seq=32,
                  batch=16),
    "base": dict(vocab=8000, hidden=256, ff=688, layers=4, heads=8, kv_heads=2, seq=128,
                 batch=32),
}

BERT = {
    "tiny": dict(vocab=64, hidden=16, ff=32, layers=2, heads=2, seq=12, batch=4),
    "small": dict(vocab=1000, hidden=64, ff=256, layers=2, heads=4, seq=32, batch=16),
    "base": dict(vocab=8000, hidden=256, ff=1024, layers=4, heads=4, seq=128, batch=32),
}

PAD, CLS, SEP = 0, 1, 2  # hf-bert's special tokens; the others are 3..vocab-1


def _config(table, size):
    if size not in table:
        raise ValueError("size must be one of tiny, small, base, not %r" % (size,))
    return table[size]


def next_token_loss(logits, target):
    """Cross-entropy of the next-token logits [B, S, V] against the tokens [B, S]."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1))


def classification_loss(logits, target):
    """Cross-entropy over the classes."""
    return F.cross_entropy(logits.float(), target)


def _llama_forward(model, inputs):
    (input_ids,) = inputs
    return model(input_ids=input_ids, use_cache=False).logits


def make_llama(size="tiny", seed=0, batch_size=None):
    """The hf-llama Workload (see the module docstring); MissingLibraryError without
    transformers."""
    c = _config(LLAMA, size)
    transformers = require("hf-llama", "transformers")
    config = transformers.LlamaConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], intermediate_size=c["ff"],
        num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
        num_key_value_heads=c["kv_heads"], max_position_embeddings=c["seq"],
        hidden_act="silu", rms_norm_eps=1e-6, tie_word_embeddings=False, use_cache=False,
        attn_implementation="sdpa")
    model = build("hf-llama", size, seed, lambda: transformers.LlamaForCausalLM(config))
    batch = batch_size or c["batch"]
    zipf = 1.0 / torch.arange(1, c["vocab"] + 1, dtype=torch.float64)

    def make_batch(gen):
        n = c["seq"] + 1
        tokens = torch.multinomial(zipf.expand(batch, -1), n, replacement=True, generator=gen)
        tokens[:, 1::2] = (tokens[:, 0::2][:, :n // 2] * 7 + 3) % c["vocab"]
        return (tokens[:, :-1].contiguous(),), tokens[:, 1:].contiguous()

    return Workload("hf-llama", size, model, next_token_loss, make_batch, batch, seed,
                    tokens_per_sample=c["seq"], lr=1e-3,
                    optimizer=("AdamW", {"fused": True, "weight_decay": 0.01}),
                    forward=_llama_forward)


def _bert_forward(model, inputs):
    input_ids, attention_mask, token_type_ids = inputs
    return model(input_ids=input_ids, attention_mask=attention_mask,
                 token_type_ids=token_type_ids).logits


def make_bert(size="tiny", seed=0, batch_size=None):
    """The hf-bert Workload (see the module docstring); MissingLibraryError without
    transformers."""
    c = _config(BERT, size)
    transformers = require("hf-bert", "transformers")
    config = transformers.BertConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"], intermediate_size=c["ff"],
        max_position_embeddings=c["seq"], type_vocab_size=2, num_labels=2,
        pad_token_id=PAD, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        attn_implementation="sdpa")
    model = build("hf-bert", size, seed,
                  lambda: transformers.BertForSequenceClassification(config))
    batch, seq, vocab = batch_size or c["batch"], c["seq"], c["vocab"]

    def make_batch(gen):
        # Content lengths from half the room to all of it ([CLS] and [SEP] take two places).
        room = seq - 2
        lengths = torch.randint(room // 2, room + 1, (batch,), generator=gen)
        labels = torch.randint(0, 2, (batch,), generator=gen)
        # A bag-of-words task: 80% of a sequence's tokens from its label's half of the
        # vocabulary (upper half: label 1), the others from the other half.
        mid = (vocab + 3) // 2
        upper = (torch.rand(batch, room, generator=gen) < 0.8) == labels[:, None].bool()
        content = torch.where(upper, torch.randint(mid, vocab, (batch, room), generator=gen),
                              torch.randint(3, mid, (batch, room), generator=gen))
        pos = torch.arange(room).expand(batch, -1)
        real = pos < lengths[:, None]
        ids = torch.full((batch, seq), PAD, dtype=torch.long)
        ids[:, 0] = CLS
        ids[:, 1:-1] = torch.where(real, content, torch.full_like(content, PAD))
        ids.scatter_(1, (lengths + 1)[:, None], SEP)
        mask = (ids != PAD).long()
        # Sentence pairs: the second half of each sequence's content is segment 1.
        types = torch.zeros_like(ids)
        types[:, 1:-1] = (real & (pos >= (lengths // 2)[:, None])).long()
        return (ids, mask, types), labels

    return Workload("hf-bert", size, model, classification_loss, make_batch, batch, seed,
                    tokens_per_sample=seq, lr=3e-3,
                    optimizer=("AdamW", {"foreach": True, "weight_decay": 0.01}),
                    forward=_bert_forward)
