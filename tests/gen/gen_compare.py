#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the test data of `parity compare`, with expected results computed by numpy in float64.

  OUT/compare/metrics/   tensor pairs in every float dtype with NaN, +-Inf, +-0, subnormals, huge
                         and tiny values; their metrics by numpy (expected.json "metrics")
  OUT/compare/matmul/    float32 matmuls with K from 16 to 65536: a sequential float32 loop, a
                         pairwise float32 sum (numpy's np.sum), products of tf32-rounded inputs,
                         and the correctly rounded result ("matmul")
  OUT/compare/dumps/     parity-dump pairs with planted differences ("dumps") and broken dumps
                         ("bad_dumps")

Usage: gen_compare.py OUT
"""
import json
import os
import struct
import sys

import numpy as np

RNG = np.random.default_rng(31337)
OUT = None
EXPECTED = {"metrics": [], "matmul": [], "dumps": [], "bad_dumps": []}

# (exponent bits, mantissa bits, bias, ieee specials) of the formats numpy can't hold natively.
NARROW = {"bfloat16": (8, 7, 127, True), "float8_e4m3fn": (4, 3, 7, False),
          "float8_e5m2": (5, 2, 15, True)}
ST_CODE = {"float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64",
           "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}


def path(*parts):
    full = os.path.join(OUT, "compare", *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def jf(v):
    """A float for JSON: finite as is, otherwise a string."""
    v = float(v)
    if np.isfinite(v):
        return v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


# --- narrow formats: decode every pattern exactly, encode by nearest-even table search -------

def narrow_values(fmt):
    e_bits, m_bits, bias, ieee = NARROW[fmt]
    width = e_bits + m_bits
    out = np.empty(1 << (width + 1), dtype=np.float64)
    for bits in range(1 << (width + 1)):
        sign = -1.0 if bits >> width else 1.0
        code = bits & ((1 << width) - 1)
        exp, man = code >> m_bits, code & ((1 << m_bits) - 1)
        if (not ieee and code == (1 << width) - 1) or (ieee and exp == (1 << e_bits) - 1 and man):
            v = np.nan
        elif ieee and exp == (1 << e_bits) - 1:
            v = np.inf
        elif exp == 0:
            v = man * 2.0 ** (1 - bias - m_bits)
        else:
            v = (1 + man / 2.0 ** m_bits) * 2.0 ** (exp - bias)
        out[bits] = sign * v
    return out


def narrow_encode(x, fmt):
    """Nearest value of the format for each finite x (ties to even), saturating at max."""
    values = narrow_values(fmt)
    width = sum(NARROW[fmt][:2])
    pos = values[: 1 << width]
    codes = np.arange(1 << width)
    finite = np.isfinite(pos)
    pos, codes = pos[finite], codes[finite]
    a = np.minimum(np.abs(x), pos[-1])
    hi = np.clip(np.searchsorted(pos, a, side="right"), 1, len(pos) - 1)
    lo = hi - 1
    d_lo, d_hi = a - pos[lo], pos[hi] - a
    take_lo = (d_lo < d_hi) | ((d_lo == d_hi) & (codes[lo] % 2 == 0))
    code = np.where(take_lo, codes[lo], codes[hi])
    return (np.where(np.signbit(x), 1 << width, 0) | code).astype(np.uint16 if width > 7 else
                                                                 np.uint8)


def write_safetensors(file, tensors):
    header, blobs, offset = {}, [], 0
    for name, (code, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(file, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# --- metrics ---------------------------------------------------------------------------------

def ordered(bits, width):
    """Sign-magnitude bit patterns on the ordered line where +0 and -0 coincide, as float64
    (exact below 2^53, which covers every width but float64's)."""
    bits = bits.astype(np.uint64)
    sign = np.uint64(1) << np.uint64(width - 1)
    magnitude = (bits & (sign - np.uint64(1))).astype(np.float64)
    return np.where((bits & sign) != 0, -magnitude, magnitude)


def reference_metrics(a, b, bits_a, bits_b, width, tiny):
    """docs/DESIGN.md's metrics, computed plainly in float64."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    both = fa & fb
    d = (a - b)[both]
    ad = np.abs(d)
    absb = np.abs(b[both])
    rel_ok = absb >= tiny
    rel = ad[rel_ok] / absb[rel_ok]
    ulp = np.abs(ordered(bits_a, width) - ordered(bits_b, width))[both].astype(np.float64)
    bounds = [0, 1, 2, 4, 8, 16, 64, 256, 1024, 65536]
    hist = []
    lo = -1
    for bound in bounds:
        hist.append(int(((ulp > lo) & (ulp <= bound)).sum()))
        lo = bound
    hist.append(int((ulp > bounds[-1]).sum()))
    aa, bb = a[both], b[both]
    denom = np.sqrt(np.dot(aa, aa)) * np.sqrt(np.dot(bb, bb))
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    return {
        "count": int(a.size),
        "max_abs": jf(ad.max()) if ad.size else 0.0,
        "mean_abs": jf(ad.mean()) if ad.size else 0.0,
        "rmse": jf(np.sqrt(np.mean(d * d))) if d.size else 0.0,
        "max_rel": jf(rel.max()) if rel.size else 0.0,
        "mean_rel": jf(rel.mean()) if rel.size else 0.0,
        "max_abs_small": jf(ad[~rel_ok].max()) if (~rel_ok).any() else 0.0,
        "cosine": jf(np.dot(aa, bb) / denom) if denom > 0 else "nan",
        "max_ulp": jf(ulp.max()) if ulp.size else 0.0,
        "mean_ulp": jf(ulp.mean()) if ulp.size else 0.0,
        "ulp_histogram": hist,
        "frac_rel_le_1e-3": jf((rel <= 1e-3).mean()) if rel.size else 1.0,
        "frac_rel_le_5e-3": jf((rel <= 5e-3).mean()) if rel.size else 1.0,
        "nan_mismatch": int((np.isnan(a) != np.isnan(b)).sum()),
        "inf_mismatch": int(((inf_a != inf_b) | (inf_a & inf_b & (a != b))).sum()),
        "identical": float((bits_a == bits_b).mean()) if a.size else 1.0,
    }


def specials(dtype_max, tiny_sub):
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, dtype_max, -dtype_max, tiny_sub,
                     -tiny_sub, 1.0, -1.0, np.nan, 3.0])


def gen_metrics():
    n = 4000
    for dtype in ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"):
        if dtype in NARROW:
            table = narrow_values(dtype)
            fin = table[np.isfinite(table)]
            vmax, vsub = np.abs(fin).max(), np.abs(fin[fin != 0]).min()
        else:
            info = np.finfo(dtype)
            vmax, vsub = float(info.max), float(info.smallest_subnormal)
        base = RNG.standard_normal(n) * 10.0 ** RNG.integers(-3, 3, n)
        a64 = base.copy()
        b64 = base * (1 + RNG.standard_normal(n) * 1e-2)  # about 1e-2 relative noise
        b64[::7] = a64[::7]  # some identical
        sa = specials(vmax, vsub)
        sb = sa.copy()
        sb[[0, 1, 3, 7, 11]] = [1.0, np.inf, -0.0, -vsub, np.nan]  # mismatches and sign flips
        a64[: len(sa)] = sa
        b64[: len(sb)] = sb
        a64[20:40] = np.linspace(-3 * vsub, 3 * vsub, 20)  # values around zero: ulps across it
        b64[20:40] = -a64[20:40]
        if dtype in NARROW:
            bits_a = narrow_encode(np.nan_to_num(a64, nan=0.0, posinf=vmax, neginf=-vmax), dtype)
            bits_b = narrow_encode(np.nan_to_num(b64, nan=0.0, posinf=vmax, neginf=-vmax), dtype)
            width = 1 + sum(NARROW[dtype][:2])
            ieee = NARROW[dtype][3]
            # Put the NaN/Inf patterns back where the inputs had them.
            nan_code = (1 << (width - 1)) - 1 if not ieee else ((1 << (width - 1)) - 1)
            inf_code = ((1 << NARROW[dtype][0]) - 1) << NARROW[dtype][1]
            for bits, src in ((bits_a, a64), (bits_b, b64)):
                bits[np.isnan(src)] = nan_code
                if ieee:
                    bits[np.isposinf(src)] = inf_code
                    bits[np.isneginf(src)] = inf_code | (1 << (width - 1))
            table = narrow_values(dtype)
            va, vb = table[bits_a], table[bits_b]
            write_safetensors(path("metrics", dtype + "_a.safetensors"),
                              {"t": (ST_CODE[dtype], bits_a)})
            write_safetensors(path("metrics", dtype + "_b.safetensors"),
                              {"t": (ST_CODE[dtype], bits_b)})
            files = [dtype + "_a.safetensors", dtype + "_b.safetensors"]
            tiny = {"bfloat16": 2.0 ** -126, "float8_e4m3fn": 2.0 ** -6,
                    "float8_e5m2": 2.0 ** -14}[dtype]
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                ta, tb = a64.astype(dtype), b64.astype(dtype)
            width = ta.dtype.itemsize * 8
            ui = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
            bits_a, bits_b = ta.view(ui), tb.view(ui)
            va, vb = ta.astype(np.float64), tb.astype(np.float64)
            np.save(path("metrics", dtype + "_a.npy"), ta)
            np.save(path("metrics", dtype + "_b.npy"), tb)
            files = [dtype + "_a.npy", dtype + "_b.npy"]
            tiny = float(np.finfo(dtype).tiny)
        with np.errstate(all="ignore"):
            ref = reference_metrics(va, vb, bits_a.astype(np.uint64), bits_b.astype(np.uint64),
                                    width, tiny)
        EXPECTED["metrics"].append({"dtype": dtype, "a": files[0], "b": files[1],
                                    "metrics": ref})


# --- matmul: the auto bound against real summation orders and tf32 --------------------------

def tf32(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def gen_matmul():
    m = n = 8
    for k in (16, 64, 256, 1024, 4096, 16384, 65536):
        x = RNG.standard_normal((m, k)).astype(np.float32)
        w = RNG.standard_normal((n, k)).astype(np.float32)
        exact = (x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32)
        products = x[:, None, :] * w[None, :, :]  # (m, n, k) float32 products, exact in f64
        naive = np.zeros((m, n), dtype=np.float32)
        for i in range(k):  # the sequential loop, in float32
            naive += products[:, :, i]
        pairwise = products.sum(axis=2, dtype=np.float32)  # numpy's pairwise float32 sum
        rounded = (tf32(x)[:, None, :] * tf32(w)[None, :, :]).sum(axis=2, dtype=np.float32)
        for name, arr in (("exact", exact), ("naive", naive), ("pairwise", pairwise),
                          ("tf32", rounded)):
            np.save(path("matmul", "k%d_%s.npy" % (k, name)), arr)
        EXPECTED["matmul"].append({"k": k})


# --- dumps ------------------------------------------------------------------------------------

def gelu(x):
    from math import erf
    return np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x.astype(np.float64))


def write_dump(name, settings, records, cut_last=False):
    """records: list of dicts with op, name, inputs/params/outputs as name -> array or spec."""
    root = path("dumps", name, "x")[:-2]
    os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
    # A TF32-capable platform (compute capability 8.0, as an A100's): the tolerance model
    # counts a manifest's allow_tf32 only where the device can run TF32.
    manifest = {"format": "parity-dump", "version": 1,
                "platform": {"device": "cuda:0", "device_name": "generated",
                             "compute_capability": "8.0"},
                "framework": {"name": "torch", "version": "generated", "settings": settings}}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    lines = []
    for seq, rec in enumerate(records):
        entry = {"seq": seq, "name": rec["name"], "op": rec["op"], "pass": "forward",
                 "call": rec.get("call", 0), "attrs": rec.get("attrs", {})}
        for role in ("inputs", "outputs"):
            entry[role] = []
            for i, arr in enumerate(rec.get(role, [])):
                entry[role].append(tensor_entry(root, seq, "%s%d" % (role[:-1], i), arr))
        entry["params"] = {k: tensor_entry(root, seq, k, v)
                           for k, v in rec.get("params", {}).items()}
        lines.append(json.dumps(entry))
    text = "\n".join(lines) + "\n"
    if cut_last:
        text = text[: -len(lines[-1]) // 2 - 1]
    with open(os.path.join(root, "records.jsonl"), "w") as f:
        f.write(text)
    return root


def tensor_entry(root, seq, slot, arr):
    if isinstance(arr, dict):  # a ready-made entry (statistics only, or deliberately broken)
        return arr
    if arr.dtype == np.uint16:  # bfloat16 bits
        dtype = "bfloat16"
    else:
        dtype = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
                 np.dtype(np.int64): "int64", np.dtype(np.float16): "float16"}[arr.dtype]
    rel = "tensors/%06d_%s.npy" % (seq, slot)
    np.save(os.path.join(root, rel), arr)
    return {"file": rel, "dtype": dtype, "shape": list(arr.shape)}


def stats_entry(arr):
    x = arr.astype(np.float64)
    return {"dtype": "float32", "shape": list(arr.shape),
            "stats": {"min": float(x.min()), "max": float(x.max()), "mean": float(x.mean()),
                      "l2": float(np.sqrt((x * x).sum())), "nan": 0, "inf": 0}}


def model_records(x, w1, b1, w2, tf32_first=False, perturb_gelu=0.0, dtype_change=False,
                  drop_last=False):
    """linear -> gelu -> linear -> softmax, computed in float64 and rounded to float32."""
    xin = tf32(x) if tf32_first else x
    w1in = tf32(w1) if tf32_first else w1
    h = (xin.astype(np.float64) @ w1in.T.astype(np.float64) + b1).astype(np.float32)
    g = gelu(h).astype(np.float32)
    if perturb_gelu:
        g = g * np.float32(1 + perturb_gelu)
    y = (g.astype(np.float64) @ w2.T.astype(np.float64)).astype(np.float32)
    e = np.exp(y.astype(np.float64) - y.max(axis=1, keepdims=True))
    p = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    records = [
        {"name": "fc1", "op": "linear", "inputs": [x], "params": {"weight": w1, "bias": b1},
         "outputs": [h]},
        {"name": "act", "op": "gelu", "attrs": {"approximate": "none"}, "inputs": [h],
         "outputs": [g]},
        {"name": "fc2", "op": "linear", "inputs": [g], "params": {"weight": w2},
         "outputs": [y.astype(np.float64) if dtype_change else y]},
        {"name": "softmax", "op": "softmax", "attrs": {"dim": -1}, "inputs": [y],
         "outputs": [p]},
        {"name": "head_stats", "op": "module", "inputs": [], "outputs": [stats_entry(p)]},
    ]
    return records[:-1] if drop_last else records


def gen_dumps():
    x = RNG.standard_normal((16, 256)).astype(np.float32)
    w1 = (RNG.standard_normal((128, 256)) / 16).astype(np.float32)
    b1 = (RNG.standard_normal(128) * 0.1).astype(np.float32)
    w2 = (RNG.standard_normal((32, 128)) / 11).astype(np.float32)
    off = {"allow_tf32_matmul": False, "allow_tf32_cudnn": True,
           "float32_matmul_precision": "highest"}
    on = dict(off, allow_tf32_matmul=True)
    base = write_dump("base", off, model_records(x, w1, b1, w2))
    same = write_dump("same", off, model_records(x, w1, b1, w2))
    tf32_hidden = write_dump("tf32_unannounced", off, model_records(x, w1, b1, w2, tf32_first=True))
    tf32_allowed = write_dump("tf32_allowed", on, model_records(x, w1, b1, w2, tf32_first=True))
    gelu_off = write_dump("gelu_off", off, model_records(x, w1, b1, w2, perturb_gelu=1e-3))
    structural = write_dump("structural", off,
                            model_records(x, w1, b1, w2, dtype_change=True, drop_last=True))
    cut = write_dump("cut_last_line", off, model_records(x, w1, b1, w2), cut_last=True)
    EXPECTED["dumps"] = [
        {"a": base, "b": same, "failed": 0, "first_divergence": None},
        # fc1's output is off by tf32 rounding: it is the first divergence; later ops inherit
        # input differences but gelu and softmax still fail their own tight tolerances.
        {"a": base, "b": tf32_hidden, "first_divergence": "fc1.forward.0.output.0"},
        {"a": base, "b": tf32_allowed, "pass": ["fc1.forward.0.output.0"]},
        {"a": base, "b": gelu_off, "first_divergence": "act.forward.0.output.0"},
        {"a": base, "b": structural, "structural": ["fc2.forward.0.output.0",
                                                    "head_stats.forward.0.output.0"]},
        {"a": base, "b": cut, "warning": "cut off", "structural": ["head_stats.forward.0.output.0"]},
    ]
    # Broken dumps: each is exit 2 naming the file and the problem.
    def broken(name, problem, manifest=True, records=None, files=()):
        root = path("bad_dumps", name, "x")[:-2]
        os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
        if manifest:
            with open(os.path.join(root, "manifest.json"), "w") as f:
                f.write(manifest if isinstance(manifest, str) else
                        json.dumps({"format": "parity-dump", "version": 1}))
        if records is not None:
            with open(os.path.join(root, "records.jsonl"), "w") as f:
                f.write(records)
        for rel, arr in files:
            np.save(os.path.join(root, rel), arr)
        EXPECTED["bad_dumps"].append({"dir": root, "error": problem})

    good = {"seq": 0, "name": "l", "op": "linear", "pass": "forward", "call": 0, "inputs": [],
            "outputs": [{"file": "tensors/y.npy", "dtype": "float32", "shape": [2, 3]}]}
    y = np.zeros((2, 3), np.float32)
    line = json.dumps(good) + "\n"
    broken("manifest_not_json", "manifest.json: not a JSON object", manifest="{oops",
           records=line, files=[("tensors/y.npy", y)])
    broken("wrong_format", "'format' is not", manifest=json.dumps({"format": "x", "version": 1}),
           records=line, files=[("tensors/y.npy", y)])
    broken("no_records", "records.jsonl", records=None)
    broken("line_not_json", "records.jsonl:2: not valid JSON",
           records=line + "{this is not json\n" + line, files=[("tensors/y.npy", y)])
    broken("missing_file", "records.jsonl:1: outputs[0]: tensor file 'tensors/y.npy' does not "
           "exist", records=line)
    broken("escaping_path", "not a path inside the dump directory",
           records=json.dumps(dict(good, outputs=[{"file": "../../etc/passwd", "dtype":
                                                   "float32", "shape": [1]}])) + "\n")
    broken("dtype_mismatch", "holds float64, the record says float32", records=line,
           files=[("tensors/y.npy", y.astype(np.float64))])
    broken("shape_mismatch", "has shape [3, 2], the record says [2, 3]", records=line,
           files=[("tensors/y.npy", y.reshape(3, 2))])
    broken("missing_field", "records.jsonl:1: 'call' is missing",
           records=json.dumps({k: v for k, v in good.items() if k != "call"}) + "\n",
           files=[("tensors/y.npy", y)])
    broken("bad_pass", "'pass' is 'sideways'", records=json.dumps(dict(good, pass_="x") | {
        "pass": "sideways"}) + "\n", files=[("tensors/y.npy", y)])
    broken("unknown_dtype", "unknown dtype 'float7'", records=json.dumps(dict(good, outputs=[
        {"file": "tensors/y.npy", "dtype": "float7", "shape": [2, 3]}])) + "\n",
        files=[("tensors/y.npy", y)])


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    OUT = os.path.abspath(sys.argv[1])
    np.seterr(over="ignore", invalid="ignore")
    gen_metrics()
    gen_matmul()
    gen_dumps()
    with open(os.path.join(OUT, "compare", "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1, allow_nan=False)


if __name__ == "__main__":
    main()
