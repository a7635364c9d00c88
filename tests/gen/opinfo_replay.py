#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity replay` over PyTorch's own float32 CPU sample inputs (its OpInfo database) for the
forward aten ops that the oracle replays in float64 (issue 32): every sample runs under
parity_dump's aten-level capture, one dump directory per OpInfo entry (written, replayed and
removed before the next: one entry's tensors at a time), and the replay verdicts are counted
per recorded aten op.

Usage (Debian's python3, which has torch; from the checkout's root):
    PYTHONPATH=python /usr/bin/python3 tests/gen/opinfo_replay.py [--parity build/parity]
        [--json PATH] [--markdown PATH] [--ops NAME,...] [--max-samples N] [--no-inplace]
        [--keep DIR] [--report-only]

Each selected OpInfo entry (every variant that supports float32 on the CPU) runs at most
--max-samples of its samples (evenly spread over all of them, the same ones every run: the
generators are seeded), each as one step of the capture, then, for entries with an in-place
variant (add_, mul_ ...), the same samples in place. Sample tensors are made outside the
capture (parity_dump.paused()), so the records are the op's own aten calls.

Records of the aten ops of LISTED_OPS (the issue's forward ops and their in-place forms) are
counted against the thresholds; every other recorded op (clone, copy_, arange, bernoulli_ ...)
is an "other op", shown but not judged. The thresholds:
  - every listed op that was recorded, and every op EXPECTED of a selected entry, is
    replayed within its bound at least once;
  - at most 1% of the listed ops' replayed calls are beyond their bound;
  - at most 5% of the listed ops' calls are not replayable.

Exit status: 0 when every threshold holds (always with --report-only), 1 when one fails (each
failure printed), 2 on a usage error, 3 when the harness itself breaks (op_db can't be
imported, the capture raises where the uncaptured op does not, `parity replay` crashes or
exits 2 or more).
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
import unittest

# The forward aten ops (a record's `op`). In-place forms (`add_`, `mul_` ...) of these
# count as listed too (see is_listed). `_embedding_bag_forward_only` is what embedding_bag
# records when no input requires grad (as in OpInfo's samples here): the same computation as
# `_embedding_bag`, so it is judged with it.
LISTED_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "convolution", "_softmax", "_log_softmax",
    "native_layer_norm", "native_batch_norm", "gelu", "silu", "relu", "sigmoid", "tanh",
    "add", "sub", "mul", "div", "sum", "mean", "embedding", "_embedding_bag",
    "_embedding_bag_forward_only", "max_pool2d_with_indices", "avg_pool2d",
    "_adaptive_avg_pool2d", "cat", "index_select", "gather", "cumsum", "native_dropout",
    "binary_cross_entropy_with_logits", "nll_loss_forward", "nll_loss2d_forward", "mse_loss",
    # torch 1.13's private attention ops ("_scaled_dot_product_* where present")
    "_scaled_dot_product_attention", "_scaled_dot_product_attention_forward",
    "_scaled_dot_product_attention_math",
    # what the model zoo's steps emit under torch 2.x (issue 46): RMSNorm, rotary embeddings,
    # the optimizers' arithmetic, attention masks, and torch 2.x's attention kernels
    "sin", "cos", "rsqrt", "pow", "lerp", "addcmul", "addcdiv", "where", "eq", "ne", "ge",
    "all", "any", "_safe_softmax", "_scaled_dot_product_flash_attention_for_cpu",
    # the foreach ops torch.optim's AdamW, Adam and SGD call (foreach=True, their default on
    # GPUs): the _foreach_* OpInfos of foreach_*_op_db
    "_foreach_add", "_foreach_sub", "_foreach_mul", "_foreach_div", "_foreach_lerp",
    "_foreach_addcmul", "_foreach_addcdiv", "_foreach_sqrt", "_foreach_neg"})
# In-place ops that overwrite `self` without computing from it: never a listed in-place form.
FILLS = frozenset({"bernoulli_", "uniform_", "normal_", "random_", "fill_", "zero_",
                   "exponential_", "geometric_", "log_normal_", "cauchy_"})

# OpInfo names (torch.testing._internal.common_methods_invocations.op_db) -> the listed aten
# ops each must record. Names absent from this torch's op_db are reported as missing. Dropout
# expects nothing: on the CPU torch 1.13 records bernoulli_, div_ and mul, not native_dropout.
EXPECTED = collections.OrderedDict([
    ("mm", ["mm"]),
    ("addmm", ["addmm"]),
    ("bmm", ["bmm"]),
    ("baddbmm", ["baddbmm"]),
    ("nn.functional.linear", ["mm", "addmm"]),
    ("nn.functional.conv1d", ["convolution"]),
    ("nn.functional.conv2d", ["convolution"]),
    ("softmax", ["_softmax"]),
    ("log_softmax", ["_log_softmax"]),
    ("nn.functional.layer_norm", ["native_layer_norm"]),
    ("native_layer_norm", ["native_layer_norm"]),
    ("nn.functional.batch_norm", ["native_batch_norm"]),
    ("native_batch_norm", ["native_batch_norm"]),
    ("nn.functional.gelu", ["gelu"]),
    ("nn.functional.silu", ["silu"]),
    ("nn.functional.relu", ["relu"]),
    ("sigmoid", ["sigmoid"]),
    ("tanh", ["tanh"]),
    ("add", ["add"]),
    ("sub", ["sub"]),
    ("mul", ["mul"]),
    ("div", ["div"]),
    ("sum", ["sum"]),
    ("mean", ["mean"]),
    ("nn.functional.embedding", ["embedding"]),
    ("nn.functional.embedding_bag", []),  # _embedding_bag or its forward-only form
    ("nn.functional.max_pool2d", ["max_pool2d_with_indices"]),
    ("nn.functional.avg_pool2d", ["avg_pool2d"]),
    ("nn.functional.adaptive_avg_pool2d", ["_adaptive_avg_pool2d"]),
    ("cat", ["cat"]),
    ("index_select", ["index_select"]),
    ("gather", ["gather"]),
    ("cumsum", ["cumsum"]),
    ("nn.functional.dropout", []),
    ("nn.functional.binary_cross_entropy_with_logits", ["binary_cross_entropy_with_logits"]),
    ("nn.functional.nll_loss", ["nll_loss_forward", "nll_loss2d_forward"]),
    ("nn.functional.mse_loss", ["mse_loss"]),
    ("nn.functional.scaled_dot_product_attention", []),
    # issue 46: the zoo's ops (RMSNorm decomposes into pow, mean, add, rsqrt and mul on the CPU)
    ("sin", ["sin"]),
    ("cos", ["cos"]),
    ("rsqrt", ["rsqrt"]),
    ("pow", ["pow"]),
    ("lerp", ["lerp"]),
    ("addcmul", ["addcmul"]),
    ("addcdiv", ["addcdiv"]),
    ("where", ["where"]),
    ("eq", ["eq"]),
    ("ne", ["ne"]),
    ("ge", ["ge"]),
    ("all", ["all"]),
    ("any", ["any"]),
    ("nn.functional.rms_norm", ["rsqrt"]),
    # the optimizers' foreach ops (their OpInfos are in foreach_*_op_db); in place as the
    # optimizers call them, and out of place
    ("_foreach_add", ["_foreach_add", "_foreach_add_"]),
    ("_foreach_sub", ["_foreach_sub"]),
    ("_foreach_mul", ["_foreach_mul", "_foreach_mul_"]),
    ("_foreach_div", ["_foreach_div", "_foreach_div_"]),
    ("_foreach_lerp", ["_foreach_lerp", "_foreach_lerp_"]),
    ("_foreach_addcmul", ["_foreach_addcmul", "_foreach_addcmul_"]),
    ("_foreach_addcdiv", ["_foreach_addcdiv", "_foreach_addcdiv_"]),
    ("_foreach_sqrt", ["_foreach_sqrt"]),
    ("_foreach_neg", ["_foreach_neg"]),
])
# Tried in place of a missing name: torch 1.13 has only the private form (its aten op,
# _scaled_dot_product_attention_forward, is not listed: an "other op").
FALLBACKS = {"nn.functional.scaled_dot_product_attention":
             "nn.functional._scaled_dot_product_attention"}

MAX_BEYOND = 0.01          # of the listed ops' replayed calls
MAX_NOT_REPLAYABLE = 0.05  # of the listed ops' calls
DEFAULT_MAX_SAMPLES = 60

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BROKEN = 0, 1, 2, 3


class HarnessError(Exception):
    """The harness itself broke (exit 3, --report-only or not)."""


def is_listed(op):
    """Whether aten op `op` (a record's `op`) is judged: a listed op or its in-place form."""
    if op in LISTED_OPS:
        return True
    return op.endswith("_") and op not in FILLS and op[:-1] in LISTED_OPS


# --- aggregation (pure: tests/python/test_opinfo_replay.py) ---------------------------------
def _counts():
    return {"calls": 0, "within": 0, "beyond": 0, "not_replayable": 0,
            "reasons": collections.Counter()}


class Tally:
    """Replay verdicts counted per recorded aten op, listed and other ops apart."""

    def __init__(self):
        self.ops = collections.defaultdict(_counts)

    def add_replay(self, doc):
        """Counts every op entry of one `parity replay --json` document."""
        if doc.get("format") != "parity-replay":
            raise HarnessError("not a parity-replay document: format %r" % doc.get("format"))
        for entry in doc.get("ops", []):
            self.add(entry)

    def add(self, entry):
        c = self.ops[entry["op"]]
        c["calls"] += 1
        if not entry.get("replayable"):
            c["not_replayable"] += 1
            c["reasons"][entry.get("reason") or "(no reason given)"] += 1
        elif entry.get("within_bound"):
            c["within"] += 1
        else:
            c["beyond"] += 1
            c["reasons"][entry.get("reason") or "beyond its bound"] += 1

    def split(self):
        listed = {k: v for k, v in self.ops.items() if is_listed(k)}
        other = {k: v for k, v in self.ops.items() if not is_listed(k)}
        return listed, other


def totals(per_op):
    t = {"calls": 0, "within": 0, "beyond": 0, "not_replayable": 0}
    for c in per_op.values():
        for k in t:
            t[k] += c[k]
    t["replayed"] = t["within"] + t["beyond"]
    return t


def check_thresholds(listed, required=()):
    """The issue's thresholds over the listed ops' counts. `required` adds ops that must be
    replayed within bound at least once even when never recorded. Returns a dict: ok,
    failures (one line each), beyond_fraction, not_replayable_fraction, without_within."""
    t = totals(listed)
    failures = []
    must = sorted(set(listed) | set(required))
    without = [op for op in must if listed.get(op, {}).get("within", 0) == 0]
    for op in without:
        calls = listed.get(op, {}).get("calls", 0)
        failures.append("%s: no call replayed within its bound (%s)" % (
            op, "%d call%s" % (calls, "" if calls == 1 else "s") if calls else "never recorded"))
    beyond = t["beyond"] / t["replayed"] if t["replayed"] else 0.0
    if beyond > MAX_BEYOND:
        failures.append("beyond bound: %d of %d replayed calls (%.2f%% > %g%%)" % (
            t["beyond"], t["replayed"], 100 * beyond, 100 * MAX_BEYOND))
    not_rep = t["not_replayable"] / t["calls"] if t["calls"] else 0.0
    if not_rep > MAX_NOT_REPLAYABLE:
        failures.append("not replayable: %d of %d calls (%.2f%% > %g%%)" % (
            t["not_replayable"], t["calls"], 100 * not_rep, 100 * MAX_NOT_REPLAYABLE))
    if not t["calls"]:
        failures.append("no listed op was recorded")
    return {"ok": not failures, "failures": failures, "beyond_fraction": beyond,
            "not_replayable_fraction": not_rep, "without_within": without, "totals": t}


def _top_reasons(reasons, n=2, width=90):
    parts = []
    for reason, count in reasons.most_common(n):
        if len(reason) > width:
            reason = reason[:width - 1] + "…"
        parts.append("%s (%d)" % (reason.replace("|", "\\|"), count))
    if len(reasons) > n:
        parts.append("+%d more" % (len(reasons) - n))
    return "; ".join(parts)


def markdown_table(per_op):
    lines = ["| op | calls | within bound | beyond bound | not replayable | top reasons |",
             "|---|---:|---:|---:|---:|---|"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append("| `%s` | %d | %d | %d | %d | %s |" % (
            op, c["calls"], c["within"], c["beyond"], c["not_replayable"],
            _top_reasons(c["reasons"])))
    return "\n".join(lines)


def markdown(summary, listed, other, check):
    t = check["totals"]
    out = ["Replay verdicts over PyTorch %s's float32 CPU OpInfo sample inputs "
           "(at most %d samples per entry; `tests/gen/opinfo_replay.py`)." % (
               summary["torch"], summary["max_samples"]), "",
           markdown_table(listed), "",
           "Listed ops: %d calls, %d replayed (%d within bound, %d beyond: %.2f%%), "
           "%d not replayable (%.2f%%)." % (
               t["calls"], t["replayed"], t["within"], t["beyond"],
               100 * check["beyond_fraction"], t["not_replayable"],
               100 * check["not_replayable_fraction"]), ""]
    if other:
        out += ["Other ops the samples recorded (not judged):", "", markdown_table(other), ""]
    entries = ", ".join("%s%s (%d)" % (e["opinfo"], "." + e["variant"] if e["variant"] else "",
                                       e["samples"]) for e in summary["entries"])
    out += ["OpInfo entries (samples run): %s." % entries]
    if summary["missing"]:
        out += ["", "Not in this torch's op_db: %s." % ", ".join(summary["missing"])]
    out += ["", "Thresholds: %s" % ("all hold." if check["ok"] else "%d fail:" % len(
        check["failures"]))]
    if not check["ok"]:
        out += [""] + ["- " + f for f in check["failures"]]
    out += [""]
    return "\n".join(out)


# --- the capture ----------------------------------------------------------------------------
def install_expecttest_stub(torch_version):
    """torch.testing._internal imports `expecttest`, PyTorch's test dependency. Under torch 2.x
    the real package must be there (the current-PyTorch environment has it: scripts/venv);
    only Debian's torch 1.13, beside which Debian packages no expecttest, gets a stand-in with
    the TestCase and ACCEPT it needs. Returns which one is used: "expecttest X.Y" or "stand-in"."""
    try:
        import expecttest  # noqa: F401
        import importlib.metadata
        return "expecttest %s" % importlib.metadata.version("expecttest")
    except ImportError:
        if not torch_version.startswith("1."):
            raise HarnessError("torch %s without the expecttest package: run under the "
                               "current-PyTorch environment (scripts/venv)" % torch_version)
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        stub.ACCEPT = False
        sys.modules["expecttest"] = stub
        return "stand-in"


def load_op_db():
    import torch
    print("opinfo_replay: torch %s, %s" % (torch.__version__,
                                          install_expecttest_stub(torch.__version__)))
    try:
        from torch.testing._internal import common_methods_invocations as methods
    except Exception as e:  # noqa: BLE001 - any import failure breaks the harness
        raise HarnessError("can't import torch's OpInfo database: %r" % (e,))
    # The _foreach_* OpInfos live in databases of their own (foreach_binary_op_db ...).
    foreach = []
    for name in sorted(dir(methods)):
        if name.startswith("foreach_") and name.endswith("_op_db"):
            for op in getattr(methods, name):
                op.parity_foreach_kind = name[len("foreach_"):-len("_op_db")]
                foreach.append(op)
    return list(methods.op_db) + foreach


class _Sample:
    def __init__(self, input, args=(), kwargs=None):
        self.input, self.args, self.kwargs = input, args, kwargs or {}


def _foreach_113_samples(op, torch):
    """torch 1.13's foreach OpInfos give bare tensor lists (sample_inputs(device, dtype, N)),
    the arguments left to its test_foreach.py: built here as that test calls the ops, with
    lists of 1, 3 and 20 tensors. Unary: the list; binary: another list, a scalar, a list of
    scalars; pointwise (addcmul, addcdiv): two lists, with and without a value."""
    kind = op.parity_foreach_kind
    for n in (1, 3, 20):
        def tensors():
            return op.sample_inputs_func(op, "cpu", torch.float32, n)
        if kind == "unary":
            yield _Sample(tensors())
        elif kind == "binary":
            yield _Sample(tensors(), (tensors(),))
            yield _Sample(tensors(), (0.75,))
            yield _Sample(tensors(), ([0.5 + i for i in range(n)],))
        elif kind == "pointwise":
            yield _Sample(tensors(), (tensors(), tensors()))
            yield _Sample(tensors(), (tensors(), tensors()), {"value": 0.25})


def sample_inputs(op, torch):
    """op's float32 CPU samples (no gradients)."""
    if getattr(op, "parity_foreach_kind", None) and torch.__version__.startswith("1."):
        return _foreach_113_samples(op, torch)
    return op.sample_inputs("cpu", torch.float32, requires_grad=False)


def select_entries(op_db, names, torch):
    """The OpInfo entries for `names` (every variant supporting float32 on the CPU), the
    names missing from op_db, and the variants skipped (with the reason)."""
    by_name = collections.defaultdict(list)
    for op in op_db:
        by_name[op.name].append(op)
    selected, missing, skipped = [], [], []
    for name in names:
        ops = by_name.get(name)
        if not ops and name in FALLBACKS and FALLBACKS[name] in by_name:
            missing.append("%s (ran %s instead)" % (name, FALLBACKS[name]))
            ops = by_name[FALLBACKS[name]]
        elif not ops:
            missing.append(name)
            continue
        for op in ops:
            if torch.float32 not in op.supported_dtypes("cpu"):
                skipped.append({"opinfo": op.name, "variant": op.variant_test_name,
                                "reason": "no float32 on the CPU"})
                continue
            selected.append((name, op))
    return selected, missing, skipped


def _spread(total, n):
    if total <= n:
        return list(range(total))
    return sorted({i * total // n for i in range(n)})


def _clone_args(value, torch):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone_args(v, torch) for v in value)
    if isinstance(value, dict):
        return {k: _clone_args(v, torch) for k, v in value.items()}
    return value


def capture_entry(op, out_dir, max_samples, inplace, torch, parity_dump):
    """Runs up to max_samples samples of OpInfo entry `op` (and its in-place variant) under an
    aten-level capture into out_dir. Returns a dict of counts; raises HarnessError when the
    capture raises where the same call without it does not."""
    torch.manual_seed(0)
    with parity_dump.paused():
        total = sum(1 for _ in sample_inputs(op, torch))
    keep = set(_spread(total, max_samples))
    info = {"opinfo": op.name, "variant": op.variant_test_name, "available": total,
            "samples": len(keep), "inplace_runs": 0, "inplace_refused": 0,
            "sample_errors": []}
    variants = [("", op)]
    if inplace and op.inplace_variant is not None:
        variants.append(("inplace", op.inplace_variant))

    def run(fn, sample, captured, copy):
        x, a, kw = sample.input, sample.args, sample.kwargs
        if copy:  # the in-place variant writes its own copies (made outside the capture)
            with parity_dump.paused():
                x, a, kw = _clone_args((x, a, kw), torch)
        try:
            if captured:
                fn(x, *a, **kw)
            else:
                with parity_dump.paused():
                    fn(x, *a, **kw)
            return None
        except Exception as e:  # noqa: BLE001 - judged by the caller
            return e

    torch.manual_seed(0)
    with parity_dump.paused():
        samples = iter(sample_inputs(op, torch))
    with parity_dump.capture(None, out_dir, backward=False) as cap:
        for index in range(total):
            with parity_dump.paused():
                sample = next(samples)
            if index not in keep:
                continue
            for kind, fn in variants:
                state = torch.get_rng_state()  # dropout draws the same numbers again
                err = run(fn, sample, True, bool(kind))
                if err is not None:
                    torch.set_rng_state(state)
                    if run(fn, sample, False, bool(kind)) is None:
                        raise HarnessError("sample %d%s raises under the capture only: %r" % (
                            index, " in place" if kind else "", err))
                    if kind:  # an in-place variant refuses a broadcast that grows self
                        info["inplace_refused"] += 1
                    else:
                        info["sample_errors"].append("sample %d: %r" % (index, err))
                elif kind:
                    info["inplace_runs"] += 1
                cap.step()
    return info


def run_replay(parity, dump_dir, json_path):
    """`parity replay DUMP --json PATH -q`: its document (exit 0 or 1), else HarnessError."""
    cmd = [parity, "replay", dump_dir, "--json", json_path, "-q"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise HarnessError("%s: %s" % (" ".join(cmd), e))
    if r.returncode not in (0, 1):
        raise HarnessError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                r.stderr.strip()[-2000:]))
    try:
        with open(json_path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise HarnessError("%s: no JSON report: %s" % (" ".join(cmd), e))


def _record_count(dump_dir):
    try:
        with open(os.path.join(dump_dir, "records.jsonl")) as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def summary_json(summary, listed, other, check):
    def plain(per_op):
        return {op: dict(c, reasons=dict(c["reasons"].most_common()))
                for op, c in sorted(per_op.items())}
    doc = dict(summary)
    doc.update({"format": "parity-opinfo-replay", "version": 1, "ops": plain(listed),
                "other_ops": plain(other), "totals": check["totals"],
                "totals_other": totals(other),
                "thresholds": {k: check[k] for k in ("ok", "failures", "beyond_fraction",
                                                     "not_replayable_fraction",
                                                     "without_within")}})
    return doc


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parity", default=os.path.join("build", "parity"),
                   help="the parity CLI (default build/parity)")
    p.add_argument("--json", help="write the summary as JSON here ('-': stdout)")
    p.add_argument("--markdown", help="write the Markdown tables here ('-': stdout)")
    p.add_argument("--ops", help="only these OpInfo names (comma-separated; any op_db name)")
    p.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES,
                   help="samples per OpInfo entry, spread evenly (default %d)"
                   % DEFAULT_MAX_SAMPLES)
    p.add_argument("--no-inplace", action="store_true",
                   help="don't also run the entries' in-place variants")
    p.add_argument("--keep", help="keep the dump and replay files under this directory")
    p.add_argument("--report-only", action="store_true",
                   help="exit 0 whatever the thresholds say (3 still when the harness breaks)")
    args = p.parse_args(argv)
    if args.max_samples < 1:
        p.error("--max-samples must be at least 1")
    if not os.path.isfile(args.parity) or not os.access(args.parity, os.X_OK):
        p.error("--parity %s: not an executable file" % args.parity)
    return args


def _write(path, text):
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    op_db = load_op_db()
    import torch
    import parity_dump
    names = list(EXPECTED)
    if args.ops:
        names = [n.strip() for n in args.ops.split(",") if n.strip()]
        known = {op.name for op in op_db} | set(EXPECTED)
        unknown = [n for n in names if n not in known]
        if unknown:
            print("opinfo_replay.py: --ops: not in this torch's op_db: %s" % ", ".join(unknown),
                  file=sys.stderr)
            return EXIT_USAGE
    selected, missing, skipped = select_entries(op_db, names, torch)
    required = set()
    for name, _ in selected:
        required.update(EXPECTED.get(name, []))
    tally = Tally()
    entries = []
    work = args.keep or tempfile.mkdtemp(prefix="opinfo_replay.")
    os.makedirs(work, exist_ok=True)
    try:
        for i, (name, op) in enumerate(selected):
            label = op.name + ("." + op.variant_test_name if op.variant_test_name else "")
            t0 = time.monotonic()
            dump = os.path.join(work, "%02d_%s" % (i, label.replace("/", "_")))
            try:
                info = capture_entry(op, dump, args.max_samples, not args.no_inplace, torch,
                                     parity_dump)
            except HarnessError as e:
                raise HarnessError("%s: %s" % (label, e))
            except Exception as e:  # noqa: BLE001 - the capture or the samples broke
                raise HarnessError("%s: capturing the samples raised %r" % (label, e))
            info["records"] = _record_count(dump)
            info["capture_s"] = round(time.monotonic() - t0, 3)
            if info["records"]:
                doc = run_replay(args.parity, dump, dump + ".replay.json")
                tally.add_replay(doc)
            info["seconds"] = round(time.monotonic() - t0, 3)
            entries.append(info)
            print("%-52s %3d/%-4d samples %4d in place %5d records %6.2f s" % (
                label, info["samples"], info["available"], info["inplace_runs"],
                info["records"], info["seconds"]), flush=True)
            if not args.keep:
                shutil.rmtree(dump, ignore_errors=True)
                try:
                    os.remove(dump + ".replay.json")
                except OSError:
                    pass
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    listed, other = tally.split()
    check = check_thresholds(listed, required)
    summary = {"torch": torch.__version__, "max_samples": args.max_samples,
               "inplace": not args.no_inplace, "entries": entries, "missing": missing,
               "skipped": skipped, "seconds": round(time.monotonic() - started, 3)}
    if args.json:
        _write(args.json, json.dumps(summary_json(summary, listed, other, check), indent=1)
               + "\n")
    if args.markdown:
        _write(args.markdown, markdown(summary, listed, other, check))
    t = check["totals"]
    print("\n%d OpInfo entries, %d samples, %.1f s; missing from op_db: %s" % (
        len(entries), sum(e["samples"] for e in entries), summary["seconds"],
        ", ".join(missing) or "none"))
    print("listed ops: %d calls, %d within bound, %d beyond (%.2f%% of replayed, limit %g%%), "
          "%d not replayable (%.2f%%, limit %g%%); other ops: %d calls" % (
              t["calls"], t["within"], t["beyond"], 100 * check["beyond_fraction"],
              100 * MAX_BEYOND, t["not_replayable"], 100 * check["not_replayable_fraction"],
              100 * MAX_NOT_REPLAYABLE, totals(other)["calls"]))
    errors = [(e["opinfo"], s) for e in entries for s in e["sample_errors"]]
    for name, s in errors:
        print("sample error (uncaptured too): %s %s" % (name, s))
    if check["ok"]:
        print("thresholds: all hold")
        return EXIT_OK
    print("thresholds FAIL:")
    for f in check["failures"]:
        print("  " + f)
    if args.report_only:
        print("(--report-only: exit 0)")
        return EXIT_OK
    return EXIT_FAILED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HarnessError as e:
        print("opinfo_replay.py: harness error: %s" % e, file=sys.stderr)
        sys.exit(EXIT_BROKEN)
