# SPDX-License-Identifier: Apache-2.0
"""Small parity-dump version 2 directories written with numpy for the CLI tests (not by
python/parity_dump): two training steps of one relu (replayable, with data) and one addmm
(statistics only, compared only), with the manifest's per-step evidence."""
import json
import os

import numpy as np

X = np.array([-1.0, 0.5, 2.0, -0.25], np.float32)


def write_dump(root, *, rank=0, step1_x=X, generators=None, scaler=None, omitted=None,
               reverse=False, extra_records=(), hash_algorithm=None, addmm_out_hash="ab"):
    """Writes a dump at `root`: per step s in (0, 1) `enc.relu` (relu of X, step 1 of
    `step1_x`) and `enc.addmm`. `generators` and `scaler` are per-step lists of the manifest's
    values; `reverse` writes the records of step 1 first (with their own seqs);
    `hash_algorithm` is the manifest's "hash" (absent: None) and `addmm_out_hash` the digest
    of addmm's output (its inputs' is "ab")."""
    os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
    steps = []
    for s in (0, 1):
        entry = {"step": s, "records": 2}
        if generators is not None:
            entry["generators"] = generators[s]
        if scaler is not None:
            entry["scaler"] = scaler[s]
        steps.append(entry)
    manifest = {"format": "parity-dump", "version": 2, "level": "aten", "rank": rank,
                "world_size": 1, "mode": "tensors", "platform": {}, "framework": {},
                "omitted": omitted or {}, "steps": steps}
    if hash_algorithm is not None:
        manifest["hash"] = hash_algorithm
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    by_step = []
    for s in (0, 1):
        x = X if s == 0 else step1_x
        files = []
        for slot, arr in (("in0", x), ("out0", np.maximum(x, 0).astype(np.float32))):
            rel = "tensors/s%d_relu_%s.npy" % (s, slot)
            np.save(os.path.join(root, rel), arr)
            files.append({"file": rel, "dtype": "float32", "shape": list(arr.shape)})
        relu = {"step": s, "rank": rank, "name": "enc.relu", "module": "enc", "op": "relu",
                "overload": "default", "pass": "forward", "call": 0, "attrs": {},
                "inputs": [dict(files[0], arg="self")], "params": {}, "outputs": [files[1]]}
        stats = {"dtype": "float32", "shape": [2, 2],
                 "stats": {"min": 0.0, "max": 1.0, "mean": 0.5, "l2": 1.0, "nan": 0, "inf": 0,
                           "zero": 0, "hash": "ab"}}
        addmm = {"step": s, "rank": rank, "name": "enc.addmm", "module": "enc", "op": "addmm",
                 "overload": "default", "pass": "forward", "call": 0,
                 "attrs": {"beta": 1, "alpha": 1},
                 "inputs": [dict(stats, arg="self"), dict(stats, arg="mat1")], "params": {},
                 "outputs": [dict(stats, stats=dict(stats["stats"], hash=addmm_out_hash))]}
        by_step.append([relu, addmm])
    records = by_step[1] + by_step[0] if reverse else by_step[0] + by_step[1]
    records += list(extra_records)
    with open(os.path.join(root, "records.jsonl"), "w") as f:
        for seq, r in enumerate(records):
            f.write(json.dumps(dict(r, seq=seq)) + "\n")
    return root
