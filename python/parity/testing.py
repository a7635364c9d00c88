# SPDX-License-Identifier: Apache-2.0
"""Assertions for tests: ``assert_close`` with tolerances derived from the dtype and the
reduction length (parity compare's ``auto`` policy), for pytest and unittest alike."""

from . import compare as _compare

__all__ = ["assert_close", "ParityAssertionError"]


class ParityAssertionError(AssertionError):
    """An AssertionError whose ``result`` is the failing :class:`parity.CompareResult`."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def _g(x):
    return "None" if x is None else f"{x:.4g}" if isinstance(x, float) else str(x)


def _derivation(t):
    """How the tolerance came about, from the report's ``tolerance`` object."""
    if not t:
        return "  (no tolerance: structural mismatch)"
    lines = [f"  policy {t.get('policy')}: {t.get('reason', '')}".rstrip()]
    if t.get("k") is not None:
        lines.append(
            f"  K = {t['k']}, compute {t.get('compute')} (u = {_g(t.get('u_compute'))}), "
            f"storage u = {_g(t.get('u_storage'))}, lambda = {_g(t.get('lambda'))}: "
            f"rtol = lambda*sqrt(K)*u_compute + 2*u_storage = {_g(t.get('rtol'))}")
        if t.get("scale") is not None:
            lines.append(f"  atol = lambda*sqrt(K)*u_compute * scale ({t.get('scale_source')}: "
                         f"{_g(t.get('scale'))}) = {_g(t.get('atol'))}")
    else:
        lines.append(f"  rtol = {_g(t.get('rtol'))}, atol = {_g(t.get('atol'))}"
                     + (f", max_ulps = {t['max_ulps']}" if t.get("max_ulps") else ""))
    return "\n".join(lines)


def _worst(tensor):
    rows = tensor.get("worst") or []
    if not rows:
        return ""
    t = tensor.get("tolerance") or {}
    out = ["Worst elements (actual = a, expected = b):",
           f"  {'position':>18}  {'a':>14}  {'b':>14}  {'|a-b|':>11}  {'allowed':>11}"]
    for r in rows:
        b = r.get("b")
        allowed = (t.get("atol", 0.0) + t.get("rtol", 0.0) * abs(b)
                   if b is not None and t.get("criterion", "abs_rel") == "abs_rel" else None)
        out.append(f"  {str(tuple(r.get('position', [r.get('index')]))):>18}  "
                   f"{_g(r.get('a')):>14}  {_g(b):>14}  {_g(r.get('abs_error')):>11}  "
                   f"{_g(allowed):>11}")
    return "\n".join(out)


# The bins of the violation histogram (src/compare/report.cc's labels).
_BINS = ["0", "(0, 1e-3]", "(1e-3, 0.01]", "(0.01, 0.1]", "(0.1, 0.5]", "(0.5, 1]", "(1, 2]",
         "(2, 10]", "(10, 100]", "> 100"]


def _histogram(tensor):
    v = tensor.get("violations")
    if not v:
        return ""
    counts = v.get("ratio_histogram", [])
    out = [f"Violations: {v.get('count')} of {tensor.get('count')} elements beyond the "
           "tolerance; |a-b| / allowed:"]
    total = sum(counts) or 1
    for i, (label, n) in enumerate(zip(_BINS, counts)):
        bar = "#" * (max(1, round(30 * n / total)) if n else 0)
        out.append(f"  {label:<14}{n:>12}  {bar}" + ("   <- allowed up to here" if i == 5 else ""))
    return "\n".join(out)


def assert_close(actual, expected, *, tol="auto", k=None, op=None, compute=None, rtol=None,
                 atol=None, msg=None):
    """Asserts that ``actual`` agrees with ``expected`` (the reference) elementwise within a
    tolerance derived as ``parity compare`` derives it: ``lambda*sqrt(k)*u`` for a reduction of
    length ``k`` in the ``compute`` precision (default: the dtype's, float32 for narrower
    ones); ``op`` names the op that produced them ("matmul", "add", "relu"...) to pick the
    model (elementwise ops: K = 1; data movement: bitwise). Without ``k`` for a reduction,
    torch.testing's defaults apply. NaN and Inf must sit at the same positions.

    Raises :class:`ParityAssertionError` (an AssertionError) with the reason, the worst
    elements, the derivation of the tolerance and the violation histogram."""
    result = _compare(actual, expected, tol=tol, k=k, compute=compute, op=op, rtol=rtol,
                      atol=atol, worst=5)
    if result.passed:
        return
    t = result.to_dict()["tensors"][0]
    parts = [f"Tensor-likes are not close (parity, tol={tol!r})!" + (f" {msg}" if msg else ""),
             f"{t['dtype']} {t['shape']}: {t.get('reason', '')}",
             "Tolerance:", _derivation(t.get("tolerance"))]
    for extra in (_worst(t), _histogram(t)):
        if extra:
            parts.append(extra)
    raise ParityAssertionError("\n".join(parts), result)
