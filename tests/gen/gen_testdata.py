#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes parity's reader test files and their expected contents, from independent sources.

.npy and .npz files are written by real numpy; .safetensors files are packed here by hand from
the public format description (8-byte little-endian header size, JSON header, data buffer).
Expected values and statistics are computed by numpy in float64; bfloat16 and float8 values
come from an exact rational reference of those formats (fractions.Fraction), not from parity.

Usage: gen_testdata.py OUTDIR    (writes OUTDIR/expected.json and the files it names)
"""
import io
import json
import os
import struct
import sys
import zipfile
from fractions import Fraction

import numpy as np

RNG = np.random.default_rng(20261202)
OUT = None
EXPECTED = {"files": [], "bad": [], "written": []}

NUMPY_DTYPES = {
    "bool": "b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float16": "f2", "float32": "f4", "float64": "f8",
}


def path(rel):
    full = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def sample(dtype, shape):
    """Values that exercise a dtype: extremes, zeros, NaN/Inf and subnormals for floats."""
    n = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (RNG.integers(0, 2, n) == 1).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        special = np.array([info.min, info.max, 0, 1], dtype=dt)
        v[: min(n, 4)] = special[: min(n, 4)]
        return v.reshape(shape)
    info = np.finfo(dt)
    v = (RNG.standard_normal(n) * 10).astype(dt)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.max, -info.max,
                        info.smallest_subnormal, -info.smallest_subnormal, info.tiny],
                       dtype=dt)
    k = min(n, len(special))
    v[:k] = special[:k]
    return v.reshape(shape)


def f64_bits(values):
    return ["%016x" % b for b in np.asarray(values, dtype=np.float64).ravel().view(np.uint64)]


def stats(values64, kind):
    """numpy's statistics, over finite elements, as parity inspect reports them."""
    flat = np.asarray(values64).ravel()
    if kind in ("int", "uint", "bool"):
        ints = [int(x) for x in flat]
        f = np.array(ints, dtype=np.float64)
        out = {"nan": 0, "inf": 0, "zeros": int(sum(1 for x in ints if x == 0)),
               "abs_mean": json_float(np.mean(np.abs(f))) if ints else 0.0,
               "rms": json_float(np.sqrt(np.mean(f * f))) if ints else 0.0}
        if ints:
            out.update(min=min(ints), max=max(ints), mean=float(np.mean(f)), std=float(np.std(f)))
        else:
            out.update(min=None, max=None, mean=None, std=None)
        return out
    x = flat.astype(np.float64)
    fin = x[np.isfinite(x)]
    out = {"nan": int(np.isnan(x).sum()), "inf": int(np.isinf(x).sum()),
           "zeros": int((x == 0).sum()),
           # Scales of the rounding error of float64 sums (see the tests' tolerances).
           "abs_mean": json_float(np.mean(np.abs(fin))) if fin.size else 0.0,
           "rms": json_float(np.sqrt(np.mean(fin * fin))) if fin.size else 0.0}
    if fin.size:
        out.update(min=float(fin.min()), max=float(fin.max()), mean=json_float(fin.mean()),
                   std=json_float(fin.std()))
    else:
        out.update(min=None, max=None, mean=None, std=None)
    return out


def json_float(v):
    """A float for JSON: finite as is, otherwise the string 'inf', '-inf' or 'nan'."""
    v = float(v)
    if np.isfinite(v):
        return v
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def kind_of(name):
    if name == "bool":
        return "bool"
    if name.startswith("int"):
        return "int"
    if name.startswith("uint"):
        return "uint"
    return "float"


def tensor_entry(name, dtype_name, arr_c, values64=None, with_values=True):
    """Expected description of one tensor; arr_c is the logical (C-order) array."""
    kind = kind_of(dtype_name)
    entry = {"name": name, "dtype": dtype_name, "shape": list(arr_c.shape)}
    v = arr_c if values64 is None else values64
    if with_values:
        if kind == "float":
            entry["values_f64_hex"] = f64_bits(np.asarray(v, dtype=np.float64))
        else:
            entry["values_int"] = [int(x) for x in np.asarray(v).ravel()]
    entry["stats"] = stats(np.asarray(v), kind)
    return entry


def add_file(rel, fmt, tensors):
    EXPECTED["files"].append({"path": rel, "format": fmt, "tensors": tensors})


# ---------------------------------------------------------------------------------------------
# .npy: every numpy dtype parity reads, both byte orders, both memory orders, 0-d, empty,
# format versions 1.0, 2.0 and 3.0.

def gen_npy():
    for name, code in NUMPY_DTYPES.items():
        base = sample(code, (3, 4, 5))
        for order_char, order_name in (("<", "le"), (">", "be")):
            if code in ("b1", "i1", "u1") and order_char == ">":
                continue
            arr = base.astype(np.dtype(order_char + code) if code not in ("b1", "i1", "u1")
                              else np.dtype(code))
            for layout in ("c", "f"):
                a = np.asfortranarray(arr) if layout == "f" else np.ascontiguousarray(arr)
                rel = "npy/%s_%s_%s.npy" % (name, order_name, layout)
                np.save(path(rel), a)
                add_file(rel, "npy", [tensor_entry(os.path.basename(rel)[:-4], name, arr)])
        zero_d = sample(code, ())
        rel = "npy/%s_0d.npy" % name
        np.save(path(rel), zero_d)
        add_file(rel, "npy", [tensor_entry("%s_0d" % name, name, np.asarray(zero_d))])
        empty = np.zeros((0, 3), dtype=code)
        rel = "npy/%s_empty.npy" % name
        np.save(path(rel), empty)
        add_file(rel, "npy", [tensor_entry("%s_empty" % name, name, empty)])
    # Explicit format versions.
    arr = sample("f4", (7, 3))
    for version in ((1, 0), (2, 0), (3, 0)):
        rel = "npy/version_%d_%d.npy" % version
        with open(path(rel), "wb") as f:
            np.lib.format.write_array(f, arr, version=version)
        add_file(rel, "npy", [tensor_entry("version_%d_%d" % version, "float32", arr)])
    # Large enough to span several parallel chunks (statistics only).
    big = (RNG.standard_normal(300_001) * 3 + 1).astype(np.float32)
    big[[5, 70_000, 200_000]] = [np.nan, np.inf, -np.inf]
    big[1000:1100] = 0
    rel = "npy/big_float32.npy"
    np.save(path(rel), big)
    add_file(rel, "npy", [tensor_entry("big_float32", "float32", big, with_values=False)])
    big16 = (RNG.standard_normal(150_000) * 100).astype(np.float16)
    rel = "npy/big_float16_be.npy"
    np.save(path(rel), big16.astype(">f2"))
    add_file(rel, "npy", [tensor_entry("big_float16_be", "float16", big16, with_values=False)])
    # 4-d Fortran order, to exercise the general transpose.
    arr4 = np.arange(2 * 3 * 4 * 5, dtype=np.int32).reshape(2, 3, 4, 5)
    rel = "npy/int32_4d_f.npy"
    np.save(path(rel), np.asfortranarray(arr4))
    add_file(rel, "npy", [tensor_entry("int32_4d_f", "int32", arr4)])


# ---------------------------------------------------------------------------------------------
# .npz: stored and deflated.

def gen_npz():
    members = {"weight": sample("f4", (4, 6)), "bias": sample("f8", (6,)),
               "steps": sample("i8", ()), "mask": sample("b1", (5,)),
               "half_be": sample("f2", (3, 2)).astype(">f2"),
               "empty": np.zeros((2, 0), np.float32)}
    for compressed, rel in ((False, "npz/stored.npz"), (True, "npz/deflated.npz")):
        (np.savez_compressed if compressed else np.savez)(path(rel), **members)
        tensors = [tensor_entry(k, {"f4": "float32", "f8": "float64", "i8": "int64",
                                    "b1": "bool", "f2": "float16"}[v.dtype.str[1:]], v)
                   for k, v in members.items()]
        add_file(rel, "npz", tensors)
    # Fortran-order member inside a deflated archive.
    arr = sample("f4", (3, 5))
    rel = "npz/fortran.npz"
    np.savez_compressed(path(rel), m=np.asfortranarray(arr))
    add_file(rel, "npz", [tensor_entry("m", "float32", arr)])


# ---------------------------------------------------------------------------------------------
# Exact references for bfloat16 and float8 (value of every bit pattern; nearest-even rounding).

FORMATS = {
    # name: (exponent bits, mantissa bits, bias, ieee specials?)
    "float16": (5, 10, 15, True),
    "bfloat16": (8, 7, 127, True),
    "float8_e4m3fn": (4, 3, 7, False),
    "float8_e5m2": (5, 2, 15, True),
}


def decode(bits, fmt):
    """Exact value of a bit pattern: a Fraction, or 'nan' / 'inf' / '-inf'."""
    e_bits, m_bits, bias, ieee = FORMATS[fmt]
    width = e_bits + m_bits
    sign = -1 if (bits >> width) & 1 else 1
    code = bits & ((1 << width) - 1)
    exp = code >> m_bits
    man = code & ((1 << m_bits) - 1)
    if not ieee and code == (1 << width) - 1:
        return "nan"
    if ieee and exp == (1 << e_bits) - 1:
        if man:
            return "nan"
        return "inf" if sign > 0 else "-inf"
    if exp == 0:
        return sign * Fraction(man) * Fraction(2) ** (1 - bias - m_bits)
    return sign * Fraction((1 << m_bits) + man) * Fraction(2) ** (exp - bias - m_bits)


def positive_table(fmt):
    """Sorted (value, code) of all finite non-negative values, plus the first value past max."""
    e_bits, m_bits, bias, ieee = FORMATS[fmt]
    width = e_bits + m_bits
    out = []
    for code in range(1 << width):
        v = decode(code, fmt)
        if isinstance(v, Fraction):
            out.append((v, code))
    max_v, max_code = out[-1]
    # With an unbounded exponent, the next value after max: one ulp of max further.
    ulp = max_v - out[-2][0]
    out.append((max_v + ulp, max_code + 1))
    return out


def encode_all(x, fmt, table, saturate):
    """Nearest-even encodings of the finite float64 array x, by searching the value table.

    Table values and midpoints are exact in float64, and a - below, above - a are exact
    (Sterbenz), so every comparison here is exact.
    """
    e_bits, m_bits, bias, ieee = FORMATS[fmt]
    width = e_bits + m_bits
    values = np.array([float(v) for v, _ in table], dtype=np.float64)
    codes = np.array([c for _, c in table], dtype=np.int64)
    a = np.abs(x)
    hi = np.clip(np.searchsorted(values, a, side="right"), 1, len(values) - 1)
    lo = hi - 1
    d_lo = a - values[lo]
    d_hi = values[hi] - a
    take_lo = (d_lo < d_hi) | ((d_lo == d_hi) & (codes[lo] % 2 == 0))
    code = np.where(take_lo, codes[lo], codes[hi])
    code = np.where(a >= values[-1], codes[-1], code)
    max_code = table[-2][1]
    if saturate:
        over = max_code
    elif ieee:
        over = ((1 << e_bits) - 1) << m_bits
    else:
        over = (1 << width) - 1
    code = np.where(code > max_code, over, code)
    sign = np.where(np.signbit(x), 1 << width, 0)
    return (sign | code).astype(np.uint32)


def gen_dtype_reference():
    # All float16 patterns through numpy (the decoding oracle), and numpy's float64->float16
    # and float32->float16 rounding on tricky inputs (numpy rounds float64 directly).
    all16 = np.arange(65536, dtype=np.uint16)
    np.save(path("dtype/float16_all_to_float32.npy"), all16.view(np.float16).astype(np.float32))
    inputs = []
    for fmt in FORMATS:
        values = np.array([float(v) for v, _ in positive_table(fmt)])
        mids = (values[:-1] + values[1:]) / 2  # exact in float64
        # Every value, every midpoint, and the float64 neighbours of each midpoint.
        inputs += [values, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)]
    inputs = list(np.concatenate(inputs))
    inputs += list(RNG.standard_normal(20000) * 10.0 ** RNG.integers(-12, 12, 20000))
    inputs += [1.0 + 2.0 ** -11 + 2.0 ** -40, 1e300, -1e300, 5e-324, 65520.0, 65519.99,
               3.3895313892515355e38, 464.0, 480.0, 59392.0, 57344.0, -0.0, 0.0]
    x = np.array(inputs, dtype=np.float64)
    x = np.concatenate([x, -x])
    x = x[np.isfinite(x)]
    np.save(path("dtype/encode_inputs_f64.npy"), x)
    np.save(path("dtype/f64_to_float16_numpy.npy"), x.astype(np.float16).view(np.uint16))
    x32 = x.astype(np.float32)
    np.save(path("dtype/f32_inputs.npy"), x32)
    np.save(path("dtype/f32_to_float16_numpy.npy"), x32.astype(np.float16).view(np.uint16))
    refs = {}
    for fmt in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        table = positive_table(fmt)
        for sat in (False, True):
            if fmt == "bfloat16" and sat:
                continue
            key = "%s_%s" % (fmt, "sat" if sat else "nonsat")
            refs[key] = encode_all(x, fmt, table, sat)
    for key, bits in refs.items():
        np.save(path("dtype/f64_to_%s.npy" % key), bits)
    # Decoded value of all float8 patterns, exactly (NaN stays NaN).
    for fmt in ("float8_e4m3fn", "float8_e5m2"):
        vals = [as_float(b, fmt) for b in range(256)]
        np.save(path("dtype/%s_all_to_f64.npy" % fmt), np.array(vals, dtype=np.float64))


# ---------------------------------------------------------------------------------------------
# .safetensors, packed per the public format description.

ST_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
            "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64",
            "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64",
            "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}


def pack_safetensors(tensors, metadata=None, header_pad=True, raw_header=None):
    """tensors: list of (name, code, shape, raw bytes). Returns the file's bytes."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    data = b""
    for name, code, shape, raw in tensors:
        header[name] = {"dtype": code, "shape": list(shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    if header_pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def narrow_sample(fmt, n):
    """Bit patterns of a narrow format covering zeros, subnormals, extremes and NaN/Inf."""
    width = 1 + sum(FORMATS[fmt][:2])
    if width <= 8:
        return np.arange(256, dtype=np.uint8)[:n] if n <= 256 else None
    bits = RNG.integers(0, 1 << width, n, dtype=np.uint32).astype(np.uint16)
    bits[:6] = [0x0000, 0x8000, 0x0001, 0x7f80, 0xff80, 0x7fc0] if fmt == "bfloat16" else \
        bits[:6]
    return bits


def as_float(bits, fmt):
    """decode() as a Python float, keeping the sign of zero (Fraction has no -0)."""
    v = decode(bits, fmt)
    if v == "nan":
        return float("nan")
    negative = (bits >> (FORMATS[fmt][0] + FORMATS[fmt][1])) & 1
    return -0.0 if (v == 0 and negative) else float(v)


def values_of(bits, fmt):
    return np.array([as_float(int(b), fmt) for b in bits.ravel()], dtype=np.float64)


def gen_safetensors():
    tensors, expected = [], []
    for name in ("bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64",
                 "uint64", "float16", "float32", "float64"):
        arr = sample(NUMPY_DTYPES[name], (2, 3))
        tensors.append((name, ST_CODES[name], arr.shape, arr.astype(arr.dtype.newbyteorder("<"))
                        .tobytes()))
        expected.append(tensor_entry(name, name, arr))
    bf = narrow_sample("bfloat16", 24).reshape(4, 6)
    tensors.append(("bfloat16", "BF16", bf.shape, bf.astype("<u2").tobytes()))
    expected.append(tensor_entry("bfloat16", "bfloat16", bf, values_of(bf, "bfloat16")
                                 .reshape(bf.shape)))
    for fmt in ("float8_e4m3fn", "float8_e5m2"):
        b8 = narrow_sample(fmt, 256).reshape(16, 16)
        tensors.append((fmt, ST_CODES[fmt], b8.shape, b8.tobytes()))
        expected.append(tensor_entry(fmt, fmt, b8, values_of(b8, fmt).reshape(b8.shape)))
    scalar = np.array(2.5, dtype=np.float32)
    tensors.append(("scalar", "F32", (), scalar.tobytes()))
    expected.append(tensor_entry("scalar", "float32", scalar))
    tensors.append(("empty", "F32", (0, 4), b""))
    expected.append(tensor_entry("empty", "float32", np.zeros((0, 4), np.float32)))
    rel = "safetensors/all_dtypes.safetensors"
    with open(path(rel), "wb") as f:
        f.write(pack_safetensors(tensors, metadata={"format": "pt", "source": "gen_testdata"}))
    add_file(rel, "safetensors", expected)
    # An unpadded header puts the data at an odd offset: read through an aligned copy.
    arr = sample("f8", (5,))
    rel = "safetensors/unaligned.safetensors"
    header = json.dumps({"x": {"dtype": "F64", "shape": [5], "data_offsets": [0, 40]}}).encode()
    while len(header) % 8 == 0:
        header += b" "
    with open(path(rel), "wb") as f:
        f.write(pack_safetensors([("x", "F64", arr.shape, arr.tobytes())], header_pad=False,
                                 raw_header=header))
    add_file(rel, "safetensors", [tensor_entry("x", "float64", arr)])


# ---------------------------------------------------------------------------------------------
# Bad input: each must be exit 2 naming the file and the problem.

def bad(rel, content, error):
    with open(path(rel), "wb") as f:
        f.write(content)
    EXPECTED["bad"].append({"path": rel, "error": error})


def npy_bytes(arr, version=(1, 0)):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version)
    return buf.getvalue()


def npy_with_header(text, data=b"", version=1):
    text = text.encode("latin1")
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text + data


def zip_bytes(members, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compress) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buf.getvalue()


def gen_bad():
    good = npy_bytes(np.arange(12, dtype=np.float32).reshape(3, 4))
    bad("bad/empty.npy", b"", "truncated")
    bad("bad/truncated_magic.npy", good[:5], "truncated")
    bad("bad/wrong_magic.npy", b"\x93NUMPX" + good[6:], "wrong magic")
    bad("bad/bad_version.npy", good[:6] + b"\x07\x00" + good[8:], "version 7.0")
    bad("bad/header_past_end.npy", good[:8] + struct.pack("<H", 900) + good[10:60],
        "past the end")
    bad("bad/header_not_dict.npy", npy_with_header("[1, 2, 3]\n"), "not a dict")
    bad("bad/header_garbage.npy", npy_with_header("{'descr': '<f4', 'fortran_order': Fals"),
        "header")
    bad("bad/header_missing_key.npy", npy_with_header("{'descr': '<f4', 'shape': (2,)}\n"),
        "lacks")
    bad("bad/shape_overflow.npy",
        npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
                        "(4294967296, 4294967296), }\n"), "overflows 64 bits")
    bad("bad/shape_bigint.npy",
        npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
                        "(99999999999999999999999,), }\n"), "overflows 64 bits")
    bad("bad/shape_negative.npy",
        npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }\n"),
        "negative dimension")
    bad("bad/data_short.npy", good[:-5], "data is 43 bytes")
    bad("bad/huge_claim.npy",
        npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
                        "(1152921504606846975,), }\n", b"\0" * 64), "needs")
    bad("bad/unknown_dtype.npy",
        npy_with_header("{'descr': '<x3', 'fortran_order': False, 'shape': (2,), }\n",
                        b"\0" * 6), "unknown dtype string")
    bad("bad/complex.npy", npy_bytes(np.zeros(3, np.complex64)), "complex64")
    bad("bad/longdouble.npy", npy_bytes(np.zeros(3, np.longdouble)), "long double")
    bad("bad/object.npy", npy_with_header(
        "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", b"\0" * 16),
        "object arrays")
    bad("bad/structured.npy",
        npy_bytes(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])), "structured")
    bad("bad/string.npy", npy_bytes(np.array(["ab", "cd"])), "string")
    bad("bad/datetime.npy", npy_bytes(np.array(["2020-01-01"], dtype="datetime64[D]")),
        "datetime")
    bad("bad/deep_nesting.npy", npy_with_header("(" * 200 + ")" * 200), "nesting too deep")
    # .npz
    bad("bad/not_a_zip.npz", b"PK\x03\x04 this is not really a zip archive", ".npz")
    bad("bad/member_not_npy.npz", zip_bytes({"a.npy": good, "notes.txt": b"hello"}),
        "member 'notes.txt': not an .npy file")
    bad("bad/member_bad_magic.npz", zip_bytes({"a.npy": b"garbage" * 10}), "member 'a.npy'")
    bad("bad/member_data_short.npz", zip_bytes({"a.npy": good[:-8]}, zipfile.ZIP_DEFLATED),
        "data is")
    bad("bad/member_object.npz", zip_bytes({"o.npy": npy_with_header(
        "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 8)}),
        "object arrays")
    truncated_zip = zip_bytes({"a.npy": good, "b.npy": good}, zipfile.ZIP_DEFLATED)
    bad("bad/truncated.npz", truncated_zip[: len(truncated_zip) // 2], ".npz")
    corrupt = bytearray(zip_bytes({"a.npy": good}, zipfile.ZIP_STORED))
    data_start = 30 + len("a.npy") + 128  # local header, member name, npy header
    corrupt[data_start + 7] ^= 0xFF  # flip a data byte: the CRC no longer matches
    bad("bad/crc_mismatch.npz", bytes(corrupt), "member 'a.npy': CRC error")
    # .safetensors
    f32 = np.arange(6, dtype=np.float32).tobytes()
    bad("bad/st_truncated.safetensors", b"\x10\x00\x00", "truncated")
    bad("bad/st_header_past_end.safetensors", struct.pack("<Q", 4096) + b"{}", "past the end")
    bad("bad/st_header_huge.safetensors", struct.pack("<Q", 1 << 62) + b"{}", "limit")
    bad("bad/st_not_json.safetensors", pack_safetensors([], raw_header=b"{not json"),
        "not valid JSON")
    bad("bad/st_not_object.safetensors", pack_safetensors([], raw_header=b"{\"a\": 1}"),
        "not an object")
    bad("bad/st_unknown_dtype.safetensors",
        pack_safetensors([("x", "F7", (6,), f32)]), "unknown or unsupported dtype 'F7'")
    bad("bad/st_out_of_range.safetensors",
        pack_safetensors([], raw_header=json.dumps(
            {"x": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}).encode()),
        "out of range")
    bad("bad/st_size_mismatch.safetensors",
        pack_safetensors([("x", "F32", (7,), f32)]), "needs 28")
    overlap_header = json.dumps({"x": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]},
                                 "y": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})
    bad("bad/st_overlap.safetensors",
        pack_safetensors([], raw_header=overlap_header.encode()) + f32, "overlap")
    gap_header = json.dumps({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                             "y": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})
    bad("bad/st_gap.safetensors", pack_safetensors([], raw_header=gap_header.encode()) + f32,
        "belong to no tensor")
    bad("bad/st_trailing.safetensors", pack_safetensors([("x", "F32", (6,), f32)]) + b"\0" * 8,
        "belong to no tensor")
    bad("bad/st_shape_overflow.safetensors", pack_safetensors([], raw_header=json.dumps(
        {"x": {"dtype": "F64", "shape": [4294967296, 4294967296, 16],
               "data_offsets": [0, 0]}}).encode()), "overflows 64 bits")
    bad("bad/st_duplicate.safetensors", pack_safetensors([], raw_header=(
        b'{"x": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, '
        b'"x": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}')), "twice")
    bad("bad/st_deep.safetensors", pack_safetensors([], raw_header=b"{\"a\":" + b"[" * 100 +
                                                    b"]" * 100 + b"}"), "nested too deeply")
    os.makedirs(path("bad/empty_dir/sub/x"), exist_ok=True)
    with open(path("bad/empty_dir/sub/readme.txt"), "w") as f:
        f.write("no tensors here\n")
    EXPECTED["bad"].append({"path": "bad/empty_dir", "error": "no tensor files"})


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    OUT = os.path.abspath(sys.argv[1])
    np.seterr(all="ignore")  # overflow to Inf in casts and in std of extreme values is expected
    os.makedirs(OUT, exist_ok=True)
    gen_npy()
    gen_npz()
    gen_safetensors()
    gen_dtype_reference()
    gen_bad()
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1, allow_nan=False)


if __name__ == "__main__":
    main()
