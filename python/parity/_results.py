# SPDX-License-Identifier: Apache-2.0
"""Typed, read-only views of parity's JSON documents: attribute access to every field, and
``to_dict()`` equal to what the CLI writes with ``--json``."""

import copy
import json


def _wrap(value, cls=None):
    if isinstance(value, dict):
        return (cls or Record)(value)
    if isinstance(value, list):
        return [_wrap(v, cls) for v in value]
    return value


class Record:
    """A JSON object with its fields as attributes (nested objects are Records too). A value
    that parity could not compute is None, never 0."""

    _fields = {}  # field name -> Record subclass of its objects

    def __init__(self, data):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        data = object.__getattribute__(self, "_data")
        if name not in data:
            raise AttributeError(f"{type(self).__name__} has no field '{name}' "
                                 f"(fields: {', '.join(data)})")
        return _wrap(data[name], type(self)._fields.get(name))

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, name):
        return self.__getattr__(name)

    def __contains__(self, name):
        return name in self._data

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def __eq__(self, other):
        return isinstance(other, Record) and self._data == other._data

    __hash__ = None

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self._data.items()
                          if not isinstance(v, (dict, list)))
        return f"{type(self).__name__}({shown})"

    def to_dict(self):
        """A deep copy of the document, as the CLI's --json has it."""
        return copy.deepcopy(self._data)

    def to_json(self, **kwargs):
        return json.dumps(self._data, **kwargs)


class TensorComparison(Record):
    """One pair of tensors of a comparison: metrics, ``tolerance`` (with its derivation),
    ``violations`` (the histogram), ``worst`` elements, ``verdict`` and ``reason``."""

    @property
    def passed(self):
        return self._data.get("verdict") == "pass"


class CompareResult(Record):
    """`parity compare`'s report (format parity-compare v1)."""

    _fields = {"tensors": TensorComparison}

    @property
    def passed(self):
        """True when every pair passed (the CLI's exit 0)."""
        return self._data["summary"]["failed"] == 0

    def __bool__(self):
        return self.passed

    @property
    def text(self):
        """The human-readable report the CLI prints."""
        return self._text


class InspectResult(Record):
    """`parity inspect`'s report (format parity-inspect v1), or one tensor's entry of it."""


class ExplainResult(Record):
    """`parity explain`'s report (format parity-explain v1)."""

    @property
    def exit_code(self):
        """The CLI's exit code: 1 when an origin or an input-data difference was found."""
        return 1 if (self._data.get("origins") or self._data.get("input_difference")) else 0


class ReplayResult(Record):
    """`parity replay`'s report (format parity-replay v1)."""


class QualityResult(Record):
    """`parity quality METRIC`'s report (format parity-quality v1)."""
