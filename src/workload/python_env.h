// SPDX-License-Identifier: Apache-2.0
// The Python interpreter that runs workloads, and where parity's Python packages come from
// (docs/DESIGN.md "Python packages").
#ifndef PARITY_WORKLOAD_PYTHON_ENV_H_
#define PARITY_WORKLOAD_PYTHON_ENV_H_

#include <map>
#include <string>

#include "core/status.h"

namespace parity::workload {

/// The interpreter for workloads: `explicit_python` when given, else $PARITY_PYTHON, else the
/// first `python3` on PATH that imports torch, else /usr/bin/python3. kUnavailable when the
/// one named (or found) can't be run.
Result<std::string> FindPython(const std::string& explicit_python);

/// The environment a workload process gets on top of this one: PYTHONPATH with the checkout's
/// python/ directory (the one this binary was built from, or share/parity/python beside an
/// installed binary) after any PYTHONPATH already set, so that `parity_workloads` imports
/// whether or not the packages are installed.
std::map<std::string, std::string> WorkloadEnvironment();

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_PYTHON_ENV_H_
