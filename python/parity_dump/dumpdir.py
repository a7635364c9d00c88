# SPDX-License-Identifier: Apache-2.0
"""The dump directory: checked before anything runs, records appended line by line, the
manifest replaced atomically."""
import json
import os


# `parity capture`'s log, which it writes into the dump directory before the capture starts.
LOG_NAME = "parity-capture.log"


class DumpDirectoryError(ValueError):
    """The dump directory cannot be used: not a directory, not empty, or not writable."""


def prepare(out, rank=0, world_size=1):
    """Creates and checks the dump directory and returns its path: `out` itself, or
    `out`/rank<N> when world_size > 1. The directory may be missing or empty; anything else
    (a file, a directory holding anything but parity capture's log, no write permission) raises DumpDirectoryError naming the
    path, before any record is written."""
    out = os.fspath(out)
    path = os.path.join(out, "rank%d" % rank) if world_size > 1 else out
    if os.path.exists(path) and not os.path.isdir(path):
        raise DumpDirectoryError("dump directory %s: exists and is not a directory" % path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise DumpDirectoryError("dump directory %s: cannot be created (%s)"
                                 % (path, e.strerror or e)) from e
    if [name for name in os.listdir(path) if name != LOG_NAME]:
        raise DumpDirectoryError(
            "dump directory %s: not empty (a dump directory holds one capture; choose a new or "
            "empty directory)" % path)
    probe = os.path.join(path, ".parity_write_probe")
    try:
        with open(probe, "w"):
            pass
        os.remove(probe)
        os.mkdir(os.path.join(path, "tensors"))
    except OSError as e:
        raise DumpDirectoryError("dump directory %s: not writable (%s)"
                                 % (path, e.strerror or e)) from e
    return path


_ENCODE = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode


class RecordsFile:
    """records.jsonl: one JSON object a line, each handed to the operating system as soon as
    written (one write(2) call per call, no buffering in the process), so that a process
    killed at any moment leaves complete lines and at most one cut-off last line."""

    def __init__(self, dump_dir):
        self.fd = os.open(os.path.join(dump_dir, "records.jsonl"),
                          os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)

    def write(self, record):
        """Appends `record` (JSON, no NaN or Inf)."""
        self._write((_ENCODE(record) + "\n").encode())

    def write_many(self, records):
        """Appends `records`, a line each, with one write."""
        self._write("".join(_ENCODE(r) + "\n" for r in records).encode())

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def write_manifest(dump_dir, doc):
    """Writes manifest.json through a temporary file and os.replace: a reader sees the old or
    the new manifest, never a partial one."""
    path = os.path.join(dump_dir, "manifest.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
    os.replace(tmp, path)
