# SPDX-License-Identifier: Apache-2.0
"""Ctrl-C kept out of the capture's own work: while the main thread is inside it (an op being
recorded, a step boundary, the stop), a SIGINT is held and raised as KeyboardInterrupt when
that work is done, so that an interrupted script leaves whole records and a manifest that
counts them. A second SIGINT while one is held is raised at once.

install() puts the handler in place only over Python's own (signal.default_int_handler), in
the main thread; the capture launcher calls it. Without it, DEFERRED costs a counter."""
import signal
import threading

_MAIN = threading.main_thread().ident
_DEPTH = [0]        # the main thread's nesting in the capture's work
_PENDING = [False]  # a SIGINT arrived within it


class _Deferred:
    __slots__ = ()

    def __enter__(self):
        if threading.get_ident() == _MAIN:
            _DEPTH[0] += 1

    def __exit__(self, exc_type, exc, tb):
        if threading.get_ident() != _MAIN:
            return False
        _DEPTH[0] -= 1
        if _DEPTH[0] == 0 and _PENDING[0]:
            _PENDING[0] = False
            if exc_type is None:
                raise KeyboardInterrupt
        return False


DEFERRED = _Deferred()


def _handler(signum, frame):
    if _DEPTH[0] > 0 and not _PENDING[0]:
        _PENDING[0] = True
        return
    _PENDING[0] = False
    signal.default_int_handler(signum, frame)


def install():
    """Holds SIGINT out of the capture's work from now on; False where another handler than
    Python's own is installed (it is left alone) or this is not the main thread."""
    if threading.get_ident() != _MAIN:
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _handler)
    return True
