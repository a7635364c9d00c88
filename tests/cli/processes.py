# SPDX-License-Identifier: Apache-2.0
"""Processes the launcher tests (test_slurm, test_multihost) start and must leave none of:
daemons in process groups of their own, and the parity ranks they launch."""
import os
import signal
import subprocess
import time


def running(executable):
    """Pids of the live processes (zombies excluded) whose executable is `executable`."""
    want = os.path.realpath(executable)
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{entry}/exe") != want:
                continue
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            pids.append(int(entry))
    return pids


def wait_until_gone(executable, seconds):
    """Waits up to `seconds` for the processes of `executable` to end; those left."""
    deadline = time.monotonic() + seconds
    while True:
        left = running(executable)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def start_group(argv, log, env=None):
    """Starts `argv` in a process group of its own, its output appended to `log`."""
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)


def stop_group(proc, grace=5.0):
    """SIGTERM to the process group of `proc`, SIGKILL after `grace` seconds; its exit code."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def group_alive(pgid):
    """Whether any process of process group `pgid` is still running."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
