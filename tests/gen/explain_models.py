#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity explain` on real training steps with planted causes: the reference workloads of
python/parity_workloads (recsys, transformer, cnn) and the model zoo's (hf-llama, hf-bert,
timm-vit, timm-resnet, torchrec-dlrm, minilm: torch 2.x), each captured at the aten level once
as A (one thread) and once as B with one planted cause, then explained; the origins found are
compared with the planted ones.

Causes are planted beneath the capture: a TorchDispatchMode entered before parity_dump's, so
the capture records each op's real inputs and the output the planted computation gave, as a
second platform would.

  unplanted          B runs on two threads                         no origin
  summation-order    B's mm/addmm/bmm sum K in two halves, the     no origin
                     second first (another BLAS blocking)
  tf32-rne/rna/trunc the first Linear/Conv module's forward        that op, reduced-precision
                     matmul or convolution on tf32-rounded           tf32, the rounding named
                     operands (ties to even, away, toward zero);
                     in a model with an MLP block, its first Linear
  bf16-autocast      B's forward under torch.autocast(bf16)        first origin a matmul or
                                                                    conv, reduced-precision bf16
  dropout-seed       B seeded differently                          with dropout (transformer,
                                                                    hf-bert, minilm): the first
                                                                    bernoulli_, rng-divergence;
                                                                    others: no origin
  input-data         one value of B's first batch moved by 1e-3    input difference, no origin
                     (a token id changed where there is no float)
  adam-eps           B's Adam with eps 1e-6 (A 1e-8; AdamW on      the optimizer step's first
                     the zoo)                                        op with eps, algorithmic
  sgd-lr             both SGD with momentum, B's lr doubled        the optimizer step's first
                     (A captured with SGD for this case)             op with lr, algorithmic

The zoo's workloads get the cases the issue plants on them (unplanted, tf32-rne, tf32-trunc,
bf16-autocast, dropout-seed, adam-eps).

Usage: explain_models.py [--parity BIN] [--workloads recsys,transformer,cnn] [--cases ...]
                         [--markdown FILE] [--json FILE]
Exit 0 when every case found what was planted, 1 otherwise; 77 (a ctest SKIP) when every
workload named lacks its library (the zoo under torch 1.13).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch.utils._python_dispatch import TorchDispatchMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import parity_dump  # noqa: E402
import parity_workloads.harness as harness  # noqa: E402
from parity_workloads.common import MissingLibraryError  # noqa: E402

A = torch.ops.aten
CASES = ["unplanted", "summation-order", "tf32-rne", "tf32-rna", "tf32-trunc", "bf16-autocast",
         "dropout-seed", "input-data", "adam-eps", "sgd-lr"]
# The model zoo's workloads (torch 2.x with transformers, timm, TorchRec) and what the issue
# plants on them; the workloads whose step draws dropout masks.
ZOO = ("hf-llama", "hf-bert", "timm-vit", "timm-resnet", "torchrec-dlrm", "minilm")
ZOO_CASES = ["unplanted", "tf32-rne", "tf32-trunc", "bf16-autocast", "dropout-seed",
             "adam-eps"]
DROPOUT = ("transformer", "hf-bert", "minilm")


def tf32(t, rounding):
    """float32 `t` rounded to tf32 by integer arithmetic on its bits."""
    if t.dtype != torch.float32:
        return t
    u = t.detach().contiguous().view(torch.int32)
    if rounding == "rna":
        u = u + 0x1000
    elif rounding == "rne":
        u = u + 0xFFF + ((u >> 13) & 1)
    return (u & ~0x1FFF).view(torch.float32).view(t.shape)


class Plant(TorchDispatchMode):
    """Rounds the operands of mm, addmm (not its added self), bmm and convolution (not its bias)
    to tf32 while `active`, or sums mm/addmm/bmm over K in two halves, the second first."""

    def __init__(self, tf32_rounding=None, split_k=False):
        super().__init__()
        self.rounding, self.split_k, self.active = tf32_rounding, split_k, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.rounding and self.active:
            if func in (A.mm.default, A.bmm.default):
                args = (tf32(args[0], self.rounding), tf32(args[1], self.rounding)) + args[2:]
            elif func is A.addmm.default:
                args = (args[0], tf32(args[1], self.rounding), tf32(args[2], self.rounding)) + args[3:]
            elif func is A.convolution.default:
                args = (tf32(args[0], self.rounding), tf32(args[1], self.rounding)) + args[2:]
        if self.split_k and func in (A.mm.default, A.addmm.default, A.bmm.default):
            return self.halves(func, args, kwargs)
        return func(*args, **kwargs)

    @staticmethod
    def halves(func, args, kwargs):
        offset = 1 if func is A.addmm.default else 0
        a, b = args[offset], args[offset + 1]
        k = a.shape[-1]
        if k < 2 or a.dtype != torch.float32:
            return func(*args, **kwargs)
        h = k // 2
        mm = A.bmm.default if func is A.bmm.default else A.mm.default
        late = mm(a[..., h:].contiguous(), b[..., h:, :].contiguous())
        early = mm(a[..., :h].contiguous(), b[..., :h, :].contiguous())
        product = late + early
        if func is A.addmm.default:
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            return beta * args[0] + alpha * product if beta != 0 else alpha * product
        return product


def first_matmul_module(w, batch):
    """The first Linear or Conv2d module whose forward runs on `batch`; in a model with an MLP
    block (a module path holding "mlp": Llama's, ViT's), the first Linear of that block."""
    order = []
    hooks = [m.register_forward_hook(lambda m, i, o, name=name: order.append((name, m)))
             for name, m in w.model.named_modules()
             if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))]
    with torch.no_grad():
        w.forward(w.model, batch[0])
    for h in hooks:
        h.remove()
    mlp = [m for name, m in order if "mlp" in name.split(".")]
    return (mlp or [m for _, m in order])[0]


def capture(name, out, case=None, steps=2):
    """Captures `steps` training steps of workload `name` (size tiny) into `out`, B's cause
    planted when `case` is given."""
    torch.set_num_threads(2 if case == "unplanted" else 1)
    w = harness.load(name, size="tiny", seed=0)
    if case in ("sgd-lr", "sgd-base"):
        opt = torch.optim.SGD(w.model.parameters(), lr=w.lr * (2 if case == "sgd-lr" else 1),
                              momentum=0.9)
    else:  # the model zoo's steps use AdamW, as their libraries' training loops do
        adam = torch.optim.AdamW if name in ZOO else torch.optim.Adam
        opt = adam(w.model.parameters(), lr=w.lr, eps=1e-6 if case == "adam-eps" else 1e-8)
    batches = list(w.batches(steps))
    if case == "input-data":
        inputs, target = batches[0]
        moved = [t.clone() for t in inputs]
        floats = [t for t in moved if t.is_floating_point()]
        if floats:
            floats[0].view(-1)[0] += 1e-3
        else:  # token ids: another token (0 or 1, in every vocabulary) at the first position
            moved[0].view(-1)[0] = 1 - moved[0].view(-1)[0] % 2
        batches[0] = (tuple(moved), target)
    plant = Plant(tf32_rounding=case[5:] if case and case.startswith("tf32-") else None,
                  split_k=case == "summation-order")
    hooks = []
    if plant.rounding:
        target_module = first_matmul_module(w, batches[0])
        hooks = [target_module.register_forward_pre_hook(lambda m, i: setattr(plant, "active", True)),
                 target_module.register_forward_hook(lambda m, i, o: setattr(plant, "active", False))]
    torch.manual_seed(2 if case == "dropout-seed" else 1)
    with plant:
        with parity_dump.capture(w.model, out, optimizer=opt) as cap:
            for batch in batches:
                w.train_step(w.model, batch, opt, autocast=torch.bfloat16 if case == "bf16-autocast" else False)
                cap.step()
    for h in hooks:
        h.remove()
    torch.set_num_threads(1)


def expected(case, workload):
    """What explain must find: (first origin's cause or None, precision, words in its reason,
    input_difference)."""
    if case == "tf32-trunc":  # a rounding no cast to fp16 does: tf32, whatever the device
        return ("reduced-precision", "tf32", "toward zero", False)
    if case.startswith("tf32-"):
        # To nearest even (or away from zero on operands without ties) tf32 replays as fp16
        # does; B's manifest says "cpu", where TF32 cannot exist: fp16 (docs/EXPLAIN.md).
        return ("reduced-precision", "fp16", "inputs rounded to 10 fraction bits", False)
    if case == "bf16-autocast":
        return ("reduced-precision", "bf16", "", False)
    if case == "dropout-seed" and workload in DROPOUT:
        return ("rng-divergence", None, "", False)
    if case == "adam-eps":
        return ("algorithmic", None, "first in the optimizer step (Adam or AdamW", False)
    if case == "sgd-lr":
        return ("algorithmic", None, "first in the optimizer step (SGD", False)
    if case == "input-data":
        return (None, None, "", True)
    return (None, None, "", False)


def judge(doc, case, workload):
    """(ok, found: first origin's cause/precision/op/pass, count of origins, problems)."""
    want_cause, want_precision, words, want_input = expected(case, workload)
    origins = doc["origins"]
    first = origins[0] if origins else None
    problems = []
    if bool(doc["input_difference"]) != want_input:
        problems.append(f"input_difference {doc['input_difference']}")
    if want_cause is None and origins:
        problems.append(f"{len(origins)} false origins, first {first['name']} {first['cause']}")
    if want_cause is not None:
        if first is None:
            problems.append("no origin")
        else:
            if first["cause"] != want_cause:
                problems.append(f"first origin {first['name']} is {first['cause']}")
            if want_precision and first.get("effective_precision") != want_precision:
                problems.append(f"precision {first.get('effective_precision')}")
            if words and words not in first["reason"]:
                problems.append(f"reason lacks '{words}': {first['reason'][:200]}")
            others = {o["name"] for o in origins} - {first["name"]}
            if case.startswith("tf32-") and others:  # the planted op in each step, no other
                problems.append("other origins: " + ", ".join(sorted(others)[:5]))
    found = (f"{first['name']} ({first['pass']}): {first['cause']}"
             + (f" [{first['effective_precision']}]" if first.get("effective_precision") else "")
             if first else ("input difference" if doc["input_difference"] else "none"))
    return not problems, found, len(origins), problems


def label(cause, precision, input_difference):
    if cause is None:
        return "input difference" if input_difference else "no origin"
    return f"{cause} [{precision}]" if precision else cause


def confusion(rows):
    """A Markdown confusion matrix: the planted cause (rows) against the first origin's cause
    found (columns), one count per pair."""
    planted, found = [], []
    for r in rows:
        cause, precision, _, input_difference = expected(r["case"], r["workload"])
        planted.append(label(cause, precision, input_difference))
        found.append(r["found_label"])
    labels = sorted(set(planted) | set(found))
    out = "| planted \\ found | " + " | ".join(labels) + " |\n"
    out += "|---|" + "---|" * len(labels) + "\n"
    for p in labels:
        if p not in planted:
            continue
        counts = [sum(1 for a, b in zip(planted, found) if a == p and b == q) for q in labels]
        out += f"| {p} | " + " | ".join(str(c) if c else "·" for c in counts) + " |\n"
    off = sum(1 for a, b in zip(planted, found) if a != b)
    return out + f"\n{len(rows)} pairs, {off} off the diagonal.\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default=os.path.join(HERE, "..", "..", "build", "parity"))
    ap.add_argument("--workloads", default="recsys,transformer,cnn")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    cases = args.cases.split(",")
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case '{c}' ({', '.join(CASES)})")
    rows, failed, skipped = [], 0, []
    # In memory where there is /dev/shm: a dump writes a file per tensor.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="explain_models_", dir=shm) as tmp:
        for workload in args.workloads.split(","):
            a = os.path.join(tmp, workload + "_A")
            try:
                capture(workload, a)
            except harness.WorkloadError as e:
                if not isinstance(e.__context__, MissingLibraryError):
                    raise
                skipped.append(f"{workload}: {e}")
                print(f"{workload:12} SKIP: {e}", flush=True)
                continue
            for case in cases:
                if workload in ZOO and case not in ZOO_CASES:
                    continue
                b = os.path.join(tmp, f"{workload}_{case}")
                capture(workload, b, case)
                base = a
                if case == "sgd-lr":  # A with the same optimizer, at the first lr
                    base = os.path.join(tmp, workload + "_A_sgd")
                    capture(workload, base, "sgd-base")
                out = os.path.join(tmp, "explain.json")
                p = subprocess.run([args.parity, "explain", base, b, "--json", out, "-q"],
                                   capture_output=True, text=True)
                if p.returncode not in (0, 1):
                    sys.exit(f"explain_models.py: parity explain exit {p.returncode}: {p.stderr}")
                with open(out) as f:
                    doc = json.load(f)
                ok, found, count, problems = judge(doc, case, workload)
                failed += not ok
                first = doc["origins"][0] if doc["origins"] else None
                found_label = label(first["cause"] if first else None,
                                    first.get("effective_precision") if first else None,
                                    doc["input_difference"])
                rows.append({"workload": workload, "case": case, "ok": ok, "found": found,
                             "found_label": found_label,
                             "origins": count, "calls": len(doc["ops"]), "exit": p.returncode,
                             "problems": problems})
                print(f"{workload:12} {case:16} {'ok ' if ok else 'BAD'} {count:4} origins  {found}"
                      + ("" if ok else "  <- " + "; ".join(problems)), flush=True)
                import shutil
                shutil.rmtree(b)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"format": "parity-explain-models", "version": 1, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| workload | case | op calls | origins | first origin found | as planted |\n")
            f.write("|---|---|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r['workload']} | {r['case']} | {r['calls']} | {r['origins']} | "
                        f"{r['found']} | {'yes' if r['ok'] else 'no: ' + '; '.join(r['problems'])} |\n")
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write("\n" + confusion(rows))
    if not rows and skipped:  # every workload lacks its library (torch 1.13): a ctest SKIP
        print("explain_models.py: SKIP: " + "; ".join(skipped))
        sys.exit(77)
    unplanted = [r for r in rows if expected(r["case"], r["workload"])[0] is None]
    false_origins = sum(r["origins"] for r in unplanted)
    print(f"{len(rows)} pairs, {failed} not as planted; false origins on the {len(unplanted)} "
          f"pairs without a planted origin: {false_origins}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
