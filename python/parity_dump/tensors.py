# SPDX-License-Identifier: Apache-2.0
"""Tensor entries of a record: the tensor saved as .npy, its statistics, or its digest alone.

An entry is {"dtype", "shape"} plus either "file" (a .npy path relative to the dump) or
"stats": min, max, mean and l2 over the finite elements (float64; absent when no element is
finite), the nan, inf and zero counts, and "hash", the hex digest of the tensor's raw bytes
in C order (bfloat16 as its 16-bit patterns) by the dump's hash algorithm (the manifest's
"hash"): "xxh3_128" (XXH3's 128-bit hash, as python-xxhash's xxh3_128_hexdigest writes it)
where the xxhash module is installed, else "sha256". Integer and bool tensors get the same
statistics, computed in float64; complex tensors (complex64, complex128: .npy files of that
dtype) get the statistics of their real and imaginary parts taken together as 2n real numbers
(the digest is still of the raw bytes). Mode "hashes" records the digest alone ("stats" holds
only "hash"): equality of the bytes is all it tells, at the cost of reading them once.

A tensor the dump cannot hold (sparse, nested, quantized, a dtype numpy lacks, or one whose
conversion raises) gets an entry without data, {"dtype", "shape", "layout", "not stored"}
(storable.py): an entry never raises into the op that is recorded.

Statistics are computed with numpy on the tensor's bytes in one pass over memory (long
tensors chunk by chunk through a float64 buffer that stays in cache): min and max in the
tensor's own dtype, the sum and the sum of squares in float64, with no multi-threaded BLAS
call (a threaded BLAS wakes its threads for long vectors, which costs more than the sum).
XXH3 runs at memory speed (about 19 GB/s a core here, against sha256's 1.8 GB/s with SHA
extensions); anyone can recompute either digest from a saved .npy. The capture computes the
statistics and digest of large tensors on a thread of its own (Hasher).
"""
import collections
import hashlib
import math
import os
import queue
import threading
import weakref

import numpy as np
import torch

from .storable import describe_error, not_stored_entry, unstorable_reason

try:
    import xxhash
except ImportError:  # python3-xxhash not installed: sha256
    xxhash = None

DTYPE_NAMES = {
    torch.bool: "bool", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
    torch.complex64: "complex64", torch.complex128: "complex128",
}
for _name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"):
    if hasattr(torch, _name):
        DTYPE_NAMES[getattr(torch, _name)] = _name

MODES = ("tensors", "stats", "hashes")


def dtype_name(dtype):
    """The dump's name of a torch dtype ("float32", "bfloat16", "complex64", ...), or None for
    a dtype a dump cannot hold (quantized, complex32, ...)."""
    return DTYPE_NAMES.get(dtype)


def to_numpy(tensor):
    """The tensor's data as a C-contiguous numpy array on the CPU, bit for bit: bfloat16 as
    uint16 and float8 as uint8 bit patterns. Copies to the CPU synchronously when needed."""
    return _bits(_cpu(tensor))


def _cpu(tensor):
    """The tensor detached, on the CPU, C-contiguous, without lazy conj/neg bits."""
    t = tensor.detach() if tensor.requires_grad else tensor
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t.contiguous()


_FLOAT8 = frozenset(d for d, name in DTYPE_NAMES.items() if name.startswith("float8"))


def _bits(t):
    """to_numpy() of a tensor already through _cpu()."""
    dtype = t.dtype
    if dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if dtype in _FLOAT8:
        return t.view(torch.uint8).numpy()
    return t.numpy()


def _sha256(raw):
    return hashlib.sha256(memoryview(raw).cast("B")).hexdigest()


def _xxh3_128(raw):
    return xxhash.xxh3_128_hexdigest(memoryview(raw).cast("B"))


HASHES = {"sha256": _sha256}
if xxhash is not None and hasattr(xxhash, "xxh3_128_hexdigest"):
    HASHES["xxh3_128"] = _xxh3_128
DEFAULT_HASH = "xxh3_128" if "xxh3_128" in HASHES else "sha256"


def hash_function(name="auto"):
    """(the algorithm's name, digest(raw numpy array) -> hex) for a hash name: "auto" (the
    fastest available: xxh3_128 with the xxhash module, else sha256), "xxh3_128" or
    "sha256". ValueError for another name or xxh3_128 without the xxhash module."""
    if name == "auto":
        name = DEFAULT_HASH
    if name not in HASHES:
        if name == "xxh3_128":
            raise ValueError("hash \"xxh3_128\" needs the xxhash module (Debian: "
                             "python3-xxhash; pip: xxhash)")
        raise ValueError("hash must be \"auto\", \"xxh3_128\" or \"sha256\", not %r" % (name,))
    return name, HASHES[name]


def stats(tensor, hash="auto"):
    """Statistics of a tensor (see the module docstring), its digest by `hash` included."""
    digest = hash_function(hash)[1]
    out, raw = _stats(_cpu(tensor))
    out["hash"] = digest(raw)
    return out


_NUMPY_FLOATS = (torch.float32, torch.float64, torch.float16)
# Vectors up to this length: sums by BLAS dot, which runs on this thread below 10000
# elements (OpenBLAS) and raises no floating-point warnings.
_DOT_MAX = 8192
_ONES = np.ones(_DOT_MAX)
_ONES.flags.writeable = False
# Longer vectors: numpy reductions over chunks of this many elements, each widened into a
# float64 buffer that stays in the CPU's cache (one read of the tensor from memory).
_CHUNK = 1 << 16
_BUFFERS = threading.local()


def _reduce(values):
    """(sum and sum of squares in float64, min, max, number of zeros) of a 1-d numpy
    vector (left unchanged); min and max in its own dtype (NaN if any element is), the
    number of zeros computed only when min <= 0 <= max (else 0)."""
    n = values.shape[0]
    if n <= _DOT_MAX:
        wide = values.astype(np.float64, copy=False)
        total, squares = float(np.dot(wide, _ONES[:n])), float(np.dot(wide, wide))
        low, high = float(values.min()), float(values.max())
        zeros = int(np.count_nonzero(values == 0)) if low <= 0 <= high else 0
        return total, squares, low, high, zeros
    buf = getattr(_BUFFERS, "buf", None)
    if buf is None:
        buf = _BUFFERS.buf = np.empty(_CHUNK)
    add, multiply, count = np.add.reduce, np.multiply, np.count_nonzero
    total = squares = 0.0
    lows, highs, zeros = [], [], 0
    with np.errstate(all="ignore"):  # Inf - Inf: no RuntimeWarning (nor error under -W)
        for i in range(0, n, _CHUNK):
            part = values[i:i + _CHUNK]
            wide = buf if part.shape[0] == _CHUNK else buf[:part.shape[0]]
            wide[...] = part
            total += add(wide)
            multiply(wide, wide, out=wide)
            squares += add(wide)
            lows.append(part.min())
            highs.append(part.max())
            zeros += count(part == 0)
    low, high = float(np.min(lows)), float(np.max(highs))
    return float(total), float(squares), low, high, int(zeros) if low <= 0 <= high else 0


def _stats(t):
    """(the statistics but "hash", the C-contiguous numpy array of the raw bytes) of a
    tensor already through _cpu(), computed with numpy in one pass over the tensor: min and
    max in the tensor's own dtype (exact), the sum and the sum of squares in float64. When
    that sum is finite every element is (a float32 or narrower value cannot overflow it),
    otherwise the finite elements are selected first."""
    raw = _bits(t)
    n = raw.size
    if n == 0:
        return {"nan": 0, "inf": 0, "zero": 0}, raw
    dtype = t.dtype
    if dtype in _NUMPY_FLOATS:
        floating = True
        values = raw.reshape(-1)
    elif t.is_floating_point():  # bfloat16, float8: float32 holds every value exactly
        floating = True
        values = t.reshape(-1).to(torch.float32).numpy()
    elif t.is_complex():  # the real and imaginary parts, interleaved
        floating = True
        values = raw.reshape(-1).view(np.float32 if dtype == torch.complex64 else np.float64)
    else:
        floating = False
        values = raw.reshape(-1)
        if dtype == torch.bool:
            values = values.view(np.uint8)
    return _describe(values, floating, _reduce(values)), raw


def _describe(values, floating, reduced):
    """The statistics but "hash" of a 1-d numpy vector of n > 0 elements, from
    _reduce(values) (or the same figures computed otherwise)."""
    out = {"nan": 0, "inf": 0, "zero": 0}
    n = values.shape[0]
    total, squares, low, high, zeros = reduced
    if floating and not math.isfinite(total):
        finite = np.isfinite(values)
        kept = int(np.count_nonzero(finite))
        nan = int(np.count_nonzero(np.isnan(values)))
        out["nan"], out["inf"] = nan, n - kept - nan
        if kept == 0:
            return out
        if kept < n:
            values = values[finite]
            total, squares, low, high, zeros = _reduce(values)
        n = kept
    out["min"], out["max"], out["zero"] = low, high, zeros
    mean = total / n
    l2 = math.sqrt(squares)
    if not math.isfinite(l2):  # float64 values near overflow: numpy's scaled norm
        with np.errstate(all="ignore"):
            l2 = float(np.linalg.norm(values.astype(np.float64, copy=False)))
    if math.isfinite(mean):
        out["mean"] = mean
    if math.isfinite(l2):
        out["l2"] = l2
    return out


# Dtypes numpy holds as they are (the statistics need no torch conversion).
_NUMPY_NATIVE = frozenset((torch.float32, torch.float16, torch.float64, torch.int64,
                           torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool))
# Short tensors of these dtypes (float64 holds each value exactly) are described in batches.
_BATCHED = {torch.float32: True, torch.float16: True, torch.float64: True,
            torch.int32: False, torch.int16: False, torch.int8: False, torch.uint8: False,
            torch.bool: False}
BATCH = 64  # tensors a batch holds before it is described


def _describe_batch(batch):
    """Fills the statistics of each (stats, float64 copy, floating) of `batch` in place
    (stats holds only "hash" until then): the figures of all of them by a few numpy calls
    over their concatenation (segment reductions), instead of a few calls each."""
    arrays = [a for _, a, _ in batch]
    starts, at = [], 0
    for a in arrays:
        starts.append(at)
        at += a.shape[0]
    wide = np.concatenate(arrays)
    with np.errstate(all="ignore"):
        sums = np.add.reduceat(wide, starts).tolist()
        lows = np.minimum.reduceat(wide, starts).tolist()
        highs = np.maximum.reduceat(wide, starts).tolist()
        zeros = np.add.reduceat(wide == 0, starts, dtype=np.int64).tolist()
        np.multiply(wide, wide, out=wide)
        squares = np.add.reduceat(wide, starts).tolist()
    for i, (stats, values, floating) in enumerate(batch):
        low, high = lows[i], highs[i]
        out = _describe(values, floating, (
            sums[i], squares[i], low, high, zeros[i] if low <= 0 <= high else 0))
        digest = stats.pop("hash")
        stats.update(out)
        stats["hash"] = digest


def _job_figures(job, digest):
    """The statistics (when the job carries the values) and the digest of a Hasher job."""
    values = job[6]
    out = {} if values is None else _describe(values, job[7], _reduce(values))
    out["hash"] = digest(job[1])
    return out


class Hasher:
    """Computes the statistics and digests of large tensors on a thread of its own: numpy,
    hashlib and xxhash release the GIL on long buffers, so they run beside the next ops (on
    a machine with a core to spare, the capture's largest single cost leaves its thread).

    submit(stats, raw, address, values=None, floating) sets stats["hash"] later, from `raw`
    (a numpy array that may share memory with a live tensor whose storage is at `address`),
    and with `values` (raw as a 1-d vector to describe) the statistics before it; it returns
    the job's number. The owner must call before_write(addresses) before anything writes to storages
    (a pending digest of one of them is computed there and then, or awaited if the thread
    is computing it), and may read a digest once ready(number) says that job and every job
    before it are done, or after wait() (where the owner's thread computes queued digests
    too: at a step's end both threads hash)."""

    MIN_BYTES = 1 << 16   # smaller digests cost less than handing them over
    MAX_PENDING = 1 << 28  # bytes held for pending digests before submit() waits

    QUEUED, RUNNING, DONE = 0, 1, 2

    def __init__(self, digest=_sha256):
        self.digest = digest
        self.jobs = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.finished = threading.Condition(self.lock)
        self.waiters = 0
        # [stats, raw, address, nbytes, state, number], in submission order
        self.pending = collections.deque()
        self.pending_bytes = 0
        self.count = 0
        self.done_upto = 0  # every job numbered up to this one is done
        self.thread = threading.Thread(target=self._run, name="parity_dump digests",
                                       daemon=True)
        self.thread.start()

    def _run(self):
        get, lock, finished = self.jobs.get, self.lock, self.finished
        while True:
            job = get()
            if job is None:
                return
            with lock:
                if job[4] != self.QUEUED:  # taken by before_write
                    continue
                job[4] = self.RUNNING
            try:
                figures = _job_figures(job, self.digest)
            except BaseException as e:  # never leave the owner waiting
                figures = {"hash": "error: %s" % e}
            with finished:
                job[0].update(figures)
                job[1] = job[6] = None
                job[4] = self.DONE
                if self.waiters:
                    finished.notify_all()

    def submit(self, stats, raw, address, values=None, floating=False):
        if self.pending_bytes > self.MAX_PENDING:
            self.wait()
        self.count += 1
        job = [stats, raw, address, raw.nbytes, self.QUEUED, self.count, values, floating]
        self.pending.append(job)
        self.pending_bytes += raw.nbytes
        self.jobs.put(job)
        return self.count

    def _prune(self):
        pending = self.pending
        while pending and pending[0][4] == self.DONE:
            job = pending.popleft()
            self.pending_bytes -= job[3]
            self.done_upto = job[5]
        if not pending:
            self.done_upto = self.count
            return True
        return False

    def ready(self, number):
        return number <= self.done_upto or (self._prune() or number <= self.done_upto)

    def before_write(self, addresses):
        if self._prune():
            return
        for job in [j for j in self.pending if j[4] != self.DONE and j[2] in addresses]:
            self._finish(job)

    def _finish(self, job):
        """Computes a queued job here, or waits for the thread computing it."""
        with self.lock:
            mine = job[4] == self.QUEUED
            if mine:
                job[4] = self.RUNNING
        if mine:
            job[0].update(_job_figures(job, self.digest))
            job[1] = job[6] = None
            job[4] = self.DONE
        elif job[4] != self.DONE:
            with self.finished:
                self.waiters += 1
                while job[4] != self.DONE:
                    self.finished.wait()
                self.waiters -= 1

    def wait(self):
        """Returns once every submitted digest is set: this thread computes the queued ones,
        newest first (the digest thread takes the oldest), and waits for the rest."""
        if self._prune():
            return
        for job in reversed(list(self.pending)):
            self._finish(job)
        self._prune()

    def close(self):
        self.wait()
        self.jobs.put(None)
        self.thread.join()


class TensorWriter:
    """Turns tensors into entries: files under `dump_dir`/tensors in mode "tensors" until
    `max_bytes` would be exceeded (then statistics, and `truncated_at_seq` is the first record
    whose tensor was not saved), statistics only in mode "stats", the digest alone in mode
    "hashes".

    With `reuse` (for a caller that reports every write to a tensor through written(), as
    the aten-level capture does), the statistics of a tensor met again unchanged (an op's
    output read by the next op, or a view of it) are those computed before. Tensors are
    known by their root (the tensor itself, or the base a view was taken of: views share
    its version counter) and where they lie in it (a contiguous tensor by its offset and
    length, whatever its shape, since its C-order bytes are the same; any other by offset,
    shape and strides): a tensor is unchanged while its root is the same object, with the
    same version counter and data pointer, and no op wrote to its storage since (written()
    forgets every tensor of the storages an op writes, so that writes through `.data`
    count too).

    With a `hasher` (a Hasher: the same caller also calls its before_write() before every
    write), the digests of large tensors are computed on the hasher's thread; the caller
    waits for hasher.count (ready()) before it writes a record holding the entries made so
    far.

    With `batch`, the statistics of short tensors (a float64 copy taken now) are computed
    BATCH at a time: the caller calls describe() before it writes records holding entries
    made since the last call.

    `hash` names the digest algorithm (see hash_function)."""

    def __init__(self, dump_dir, mode="tensors", max_bytes=None, file_format="%06d_%s",
                 reuse=False, hasher=None, batch=False, hash="auto"):
        if mode not in MODES:
            raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
        self.dump_dir = dump_dir
        self.mode = mode
        self.max_bytes = max_bytes
        self.file_format = file_format
        self.saved_bytes = 0
        self.truncated_at_seq = None
        self.reuse = reuse
        self.hasher = hasher
        self.hash, self.digest = hash_function(hash)
        self.batching = batch and mode != "hashes"  # a digest needs no batch
        self.batch = []  # (stats holding only "hash", float64 copy, floating)
        # (id(root), layout, dtype) -> (weak reference to root, version, data pointer, stats)
        self.seen = {}
        self.storages = {}  # storage address -> keys in seen

    def forget(self):
        """Forgets every tensor met (a step boundary, or writes the caller cannot see)."""
        self.seen.clear()
        self.storages.clear()

    def written(self, tensors, storages=()):
        """Forgets the tensors that share storage with `tensors` (written by an op) or whose
        storage address is in `storages` (their addresses before the op: an out= argument
        may be resized to new storage)."""
        if not self.seen:
            return
        pop = self.seen.pop
        for address in set(storages).union(map(storage_address, tensors)):
            for key in self.storages.pop(address, ()):
                pop(key, None)

    def _reused_stats(self, tensor, shape):
        """(stats or None, (key, root, version, data pointer) to remember them under, or
        None)."""
        try:
            version, pointer = tensor._version, tensor.data_ptr()
        except RuntimeError:  # inference tensors have no version counter; no data pointer
            return None, None
        root = tensor._base
        if root is None:
            root = tensor
        if tensor.is_contiguous():
            key = (id(root), tensor.dtype, tensor.storage_offset(), tensor.numel())
        else:
            key = (id(root), tensor.dtype, tensor.storage_offset(), shape, tensor.stride())
        hit = self.seen.get(key)
        if hit is not None and hit[1] == version and hit[2] == pointer and hit[0]() is root:
            return hit[3], None
        return None, (key, root, version, pointer)

    def _remember(self, tensor, ident, result):
        if len(self.seen) > 100000:
            self.forget()
        key, root, version, pointer = ident
        self.seen[key] = (weakref.ref(root), version, pointer, result)
        self.storages.setdefault(storage_address(tensor), []).append(key)

    def entry(self, tensor, seq, slot):
        """The entry of `tensor` for record `seq` (slot "in0", "out1", ...), its data written
        now (the tensor may change after this returns). A tensor the dump cannot hold, or
        whose conversion raises (an Exception, which goes no further), gets an entry without
        data (storable.not_stored_entry)."""
        reason = unstorable_reason(tensor, DTYPE_NAMES)
        if reason is None:
            try:
                return self._entry(tensor, seq, slot)
            except Exception as e:  # pylint: disable=broad-except
                reason = describe_error(e)
        return not_stored_entry(tensor, reason, DTYPE_NAMES)

    def not_stored(self, tensor, reason):
        """The entry of `tensor` without its data, `reason` saying why."""
        return not_stored_entry(tensor, reason, DTYPE_NAMES)

    def _entry(self, tensor, seq, slot):
        """entry() of a tensor unstorable_reason() accepts."""
        shape = list(tensor.shape)
        name = DTYPE_NAMES[tensor.dtype]
        if tensor.device.type == "meta":
            return {"dtype": name, "shape": shape, "stats": {"nan": 0, "inf": 0, "zero": 0}}
        entry = {"dtype": name, "shape": shape}
        if self.mode == "tensors":
            array = to_numpy(tensor)
            if self.max_bytes is None or self.saved_bytes + array.nbytes <= self.max_bytes:
                rel = "tensors/" + (self.file_format % (seq, slot)) + ".npy"
                np.save(os.path.join(self.dump_dir, rel), array)
                self.saved_bytes += array.nbytes
                entry["file"] = rel
                return entry
            if self.truncated_at_seq is None:
                self.truncated_at_seq = seq
        if self.reuse:
            result, ident = self._reused_stats(tensor, tuple(shape))
            if result is None:
                result = self._stats(tensor)
                if ident is not None:
                    self._remember(tensor, ident, result)
            entry["stats"] = result
        else:
            entry["stats"] = self._stats(tensor)
        return entry

    def describe(self):
        """Completes the statistics of the short tensors met since the last call."""
        if self.batch:
            batch, self.batch = self.batch, []
            _describe_batch(batch)

    def _stats(self, tensor):
        t = _cpu(tensor)
        if self.mode == "hashes":
            return self._with_digest({}, _bits(t), tensor)
        if self.batching:
            floating = _BATCHED.get(t.dtype)
            if floating is not None and 0 < t.numel() <= _DOT_MAX:
                raw = _bits(t)
                values = raw.reshape(-1)
                if floating is False and values.dtype == np.bool_:
                    values = values.view(np.uint8)
                result = {"hash": self.digest(raw)}
                self.batch.append((result, values.astype(np.float64), floating))
                return result
        if self.hasher is not None and t.dtype in _NUMPY_NATIVE:
            raw = _bits(t)
            if raw.nbytes >= self.hasher.MIN_BYTES:  # statistics and digest on its thread
                values = raw.reshape(-1)
                if values.dtype == np.bool_:
                    values = values.view(np.uint8)
                result = {}
                self.hasher.submit(result, raw, storage_address(tensor), values,
                                   t.is_floating_point())
                return result
        return self._with_digest(*_stats(t), tensor)

    def _with_digest(self, result, raw, tensor):
        """`result` with "hash", the digest of `raw` (the bytes of `tensor`): a large tensor's
        set later by the hasher's thread."""
        if self.hasher is not None and raw.nbytes >= self.hasher.MIN_BYTES:
            self.hasher.submit(result, raw, storage_address(tensor))
        else:
            result["hash"] = self.digest(raw)
        return result


def storage_address(tensor):
    """The address of the tensor's storage (where its element at offset 0 is), None for a
    tensor without one (meta, sparse, ...)."""
    try:
        return tensor.data_ptr() - tensor.storage_offset() * tensor.element_size()
    except Exception:  # pylint: disable=broad-except
        return None
