# SPDX-License-Identifier: Apache-2.0
"""torchrec-dlrm: TorchRec's DLRM (torchrec.models.dlrm.DLRM) over an EmbeddingBagCollection,
on the CPU (TorchRec's jagged-tensor operators come from fbgemm-gpu-cpu).

Each sparse feature has a table of its own (EmbeddingBagConfig, randomly initialised by
TorchRec's init_fn; table 1 mean-pooled, the others sum-pooled); a batch's sparse features are
a KeyedJaggedTensor (keys f0, f1, ..., values and lengths per key), its dense features go
through the DenseArch MLP; the InteractionArch takes the pairwise dot products, the OverArch
gives a click logit scored with binary cross-entropy with logits. Called as TorchRec's users
call it: model(dense_features=..., sparse_features=KeyedJaggedTensor).

The batches hold plain tensors (dense [B, dense], ids [tables, N], lengths [tables, B], as
recsys.py's, so DataLoader workers, pinning and `.to(device)` treat them like any other
workload's); the forward hook makes the KeyedJaggedTensor (from_lengths_sync) from them.
Data as recsys.py's: clicks from a fixed linear "teacher" of the dense features.
Optimizer: Adagrad (what TorchRec's DLRM examples train with), lr 0.05.
Needs torchrec and fbgemm-gpu-cpu (the torch 2.x environment, scripts/venv), imported when the
workload is built.
"""
import torch
import torch.nn.functional as F

from .common import Workload, build, require

# size -> dense features, tables, rows per table, embedding dim, ids per bag (mean),
#         DenseArch widths (the last is the embedding dim), OverArch widths (the last is 1),
#         batch
CONFIGS = {
    "tiny": dict(dense=8, tables=3, rows=50, dim=8, ids=3, dense_arch=(16,), over=(16,),
                 batch=8),
    "small": dict(dense=13, tables=8, rows=1000, dim=16, ids=4, dense_arch=(64,),
                  over=(64, 32), batch=64),
    "base": dict(dense=13, tables=26, rows=10000, dim=64, ids=8, dense_arch=(512, 256),
                 over=(512, 256), batch=256),
}


def loss_fn(logits, target):
    """Binary cross-entropy of the click logit."""
    return F.binary_cross_entropy_with_logits(logits.float(), target)


def make(size="tiny", seed=0, batch_size=None):
    """The torchrec-dlrm Workload (see the module docstring); MissingLibraryError without
    torchrec (or its fbgemm_gpu operators)."""
    if size not in CONFIGS:
        raise ValueError("size must be one of tiny, small, base, not %r" % (size,))
    c = CONFIGS[size]
    _, dlrm, configs, modules, jagged = require(
        "torchrec-dlrm", ("fbgemm_gpu", "fbgemm-gpu-cpu"), ("torchrec.models.dlrm", "torchrec"),
        ("torchrec.modules.embedding_configs", "torchrec"),
        ("torchrec.modules.embedding_modules", "torchrec"),
        ("torchrec.sparse.jagged_tensor", "torchrec"))
    keys = ["f%d" % t for t in range(c["tables"])]

    def make_model():
        tables = [configs.EmbeddingBagConfig(
            name="t%d" % t, embedding_dim=c["dim"], num_embeddings=c["rows"],
            feature_names=[keys[t]],
            pooling=configs.PoolingType.MEAN if t == 1 else configs.PoolingType.SUM)
            for t in range(c["tables"])]
        ebc = modules.EmbeddingBagCollection(tables=tables, device=torch.device("cpu"))
        return dlrm.DLRM(embedding_bag_collection=ebc, dense_in_features=c["dense"],
                         dense_arch_layer_sizes=list(c["dense_arch"]) + [c["dim"]],
                         over_arch_layer_sizes=list(c["over"]) + [1])

    model = build("torchrec-dlrm", size, seed, make_model)
    KeyedJaggedTensor = jagged.KeyedJaggedTensor

    def forward(model, inputs):
        dense, ids, lengths = inputs
        sparse = KeyedJaggedTensor.from_lengths_sync(keys=keys, values=ids.reshape(-1),
                                                     lengths=lengths.reshape(-1))
        return model(dense_features=dense, sparse_features=sparse)

    batch = batch_size or c["batch"]
    total = batch * c["ids"]
    teacher = torch.randn(c["dense"], 1, generator=torch.Generator().manual_seed(1234))

    def make_batch(gen):
        dense = torch.randn(batch, c["dense"], generator=gen)
        ids = torch.randint(0, c["rows"], (c["tables"], total), generator=gen)
        cuts = torch.sort(torch.randint(0, total + 1, (c["tables"], batch - 1), generator=gen),
                          dim=1).values
        edges = torch.cat([torch.zeros(c["tables"], 1, dtype=torch.long), cuts,
                           torch.full((c["tables"], 1), total, dtype=torch.long)], dim=1)
        lengths = edges[:, 1:] - edges[:, :-1]
        return (dense, ids, lengths), (dense @ teacher > 0).to(torch.float32)

    return Workload("torchrec-dlrm", size, model, loss_fn, make_batch, batch, seed, lr=0.05,
                    optimizer=("Adagrad", {}), forward=forward)
