# SPDX-License-Identifier: Apache-2.0
"""`parity capture`'s entry at interpreter start: parity puts this directory first on
PYTHONPATH, so Python imports this module as sitecustomize. It runs the sitecustomize this
one shadows (Debian's, a virtual environment's); then, when $PARITY_CAPTURE says this process
captures, it waits for torch to be imported and installs parity_dump's launcher
(parity_dump/launcher.py). Nothing here imports torch or parity_dump: a process that never
imports torch pays only for reading the variable."""
import importlib
import importlib.util
import json
import os
import sys
import time

ENV = "PARITY_CAPTURE"


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    saved_path, saved_module = sys.path[:], sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001 - as site.py does: report and go on
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
              % (type(e).__name__, e), file=sys.stderr)
    finally:
        sys.path[:] = saved_path
        if saved_module is not None:
            sys.modules["sitecustomize"] = saved_module


def _config():
    """The launcher's configuration for this process, or None when it does not capture: no
    $PARITY_CAPTURE, or a torchrun agent (workers_only, no $RANK). A process that captures
    removes the variable, so that the processes it starts do not."""
    text = os.environ.get(ENV)
    if not text:
        return None
    try:
        config = json.loads(text)
    except ValueError:
        return None
    if not isinstance(config, dict) or "out" not in config:
        return None
    if config.get("workers_only") and "RANK" not in os.environ:
        return None
    del os.environ[ENV]
    return config


def _log(config, text):
    rank = os.environ.get("RANK")
    line = "%s %s%s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"),
                          "rank %s: " % rank if rank is not None else "", text)
    try:
        with open(os.path.join(config["out"], "parity-capture.log"), "a") as f:
            f.write(line)
    except OSError:
        pass


def _install(config):
    try:
        from parity_dump.launcher import Launcher
        Launcher(config).install()
    except Exception as e:  # noqa: BLE001 - the script runs on, uncaptured; the log says why
        _log(config, "the capture could not be installed: %r" % (e,))


class _AfterImport:
    """A meta path finder that runs `then` once module `name` has been executed, and then
    leaves sys.meta_path. Finding and loading stay the other finders'."""

    def __init__(self, name, then):
        self.name = name
        self.then = then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module, then = spec.loader.exec_module, self.then

        def exec_then(module):
            exec_module(module)
            then()
        spec.loader.exec_module = exec_then  # this spec's own loader object
        return spec


def _boot():
    config = _config()
    if config is None:
        return
    if "torch" in sys.modules:
        _install(config)
    else:
        sys.meta_path.insert(0, _AfterImport("torch", lambda: _install(config)))


_chain()
_boot()
