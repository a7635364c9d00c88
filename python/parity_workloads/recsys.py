# SPDX-License-Identifier: Apache-2.0
"""recsys: a recommendation model shaped after MLPerf's DLRM.

Dense features go through a bottom MLP; each sparse feature is a bag of ids pooled by an
EmbeddingBag (offsets computed in the model from the bag lengths with cumsum); the pairwise
dot products of all feature vectors (bmm, lower triangle taken with gather) and the dense
vector feed a top MLP whose sigmoid output is scored with binary cross-entropy.
"""
import torch
import torch.nn.functional as F

from .common import Workload, build

# size -> dense features, tables, rows per table, embedding dim, ids per bag (mean),
#         bottom MLP widths, top MLP widths, batch
CONFIGS = {
    "tiny": dict(dense=8, tables=3, rows=50, dim=8, ids=3, bottom=(16,), top=(16,), batch=8),
    "small": dict(dense=13, tables=8, rows=1000, dim=16, ids=4, bottom=(64,), top=(64, 32),
                  batch=64),
    "base": dict(dense=13, tables=26, rows=10000, dim=64, ids=8, bottom=(512, 256),
                 top=(512, 256), batch=256),
}


def mlp(widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class DLRM(torch.nn.Module):
    """forward(dense [B, dense], ids [tables, N], lengths [tables, B]) -> click probability
    [B, 1]; bag b of table t holds lengths[t, b] consecutive ids of ids[t]."""

    def __init__(self, dense, tables, rows, dim, bottom, top):
        super().__init__()
        self.bottom = torch.nn.Sequential(mlp((dense,) + bottom + (dim,)), torch.nn.ReLU())
        # Table 1 averages its bags, the others sum them.
        self.embeddings = torch.nn.ModuleList(
            torch.nn.EmbeddingBag(rows, dim, mode="mean" if t == 1 else "sum")
            for t in range(tables))
        features = tables + 1
        rows_i, cols_i = torch.tril_indices(features, features, offset=-1)
        self.register_buffer("triangle", rows_i * features + cols_i, persistent=False)
        self.top = mlp((dim + self.triangle.numel(),) + top + (1,))

    def forward(self, dense, ids, lengths):
        x = self.bottom(dense)
        offsets = torch.cumsum(lengths, dim=1) - lengths
        vectors = [x] + [bag(ids[t], offsets[t]) for t, bag in enumerate(self.embeddings)]
        z = torch.stack(vectors, dim=1)
        pairs = torch.bmm(z, z.transpose(1, 2)).flatten(1)
        tri = torch.gather(pairs, 1, self.triangle.expand(pairs.shape[0], -1))
        return torch.sigmoid(self.top(torch.cat([x, tri], dim=1)))


def loss_fn(prob, target):
    """Binary cross-entropy of the click probability."""
    return F.binary_cross_entropy(prob, target)


def make(size="tiny", seed=0, batch_size=None):
    """The recsys Workload (see module docstring)."""
    c = CONFIGS.get(size)
    model = build("recsys", size, seed, lambda: DLRM(c["dense"], c["tables"], c["rows"],
                                                        c["dim"], c["bottom"], c["top"]))
    batch = batch_size or c["batch"]
    total = batch * c["ids"]
    teacher = torch.randn(c["dense"], 1, generator=torch.Generator().manual_seed(1234))

    def make_batch(gen):
        dense = torch.randn(batch, c["dense"], generator=gen)
        ids = torch.randint(0, c["rows"], (c["tables"], total), generator=gen)
        cuts = torch.randint(0, total + 1, (c["tables"], batch - 1), generator=gen)
        cuts = torch.sort(cuts, dim=1).values
        edges = torch.cat([torch.zeros(c["tables"], 1, dtype=torch.long), cuts,
                           torch.full((c["tables"], 1), total, dtype=torch.long)], dim=1)
        lengths = edges[:, 1:] - edges[:, :-1]
        # Clicks a model can learn: a fixed linear "teacher" of the dense features.
        target = (dense @ teacher > 0).to(torch.float32)
        return (dense, ids, lengths), target

    # DLRM trains at high learning rates (MLPerf's reference: SGD at lr 24 with warm-up).
    return Workload("recsys", size, model, loss_fn, make_batch, batch, seed, lr=1e-2)
