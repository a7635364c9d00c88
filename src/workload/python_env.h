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

/// The environment a workload process gets on top of this one: PYTHONPATH with the packages
/// installed beside this binary (../lib/python3/dist-packages, cmake/install.cmake), else the
/// checkout's python/ directory this binary was built from, before any PYTHONPATH already set,
/// so that `parity_workloads` imports wherever parity runs from and no stray copy on the
/// user's path stands in for it: an installed or unpacked package uses its own copy, a build
/// tree its checkout's; the user's own modules (MODULE:FUNCTION workloads) still import.
std::map<std::string, std::string> WorkloadEnvironment();

/// The directory holding parity's Python packages (parity_dump, parity_workloads) as
/// WorkloadEnvironment picks it; "" when there is none.
std::string ParityPythonDirectory();

}  // namespace parity::workload

#endif  // PARITY_WORKLOAD_PYTHON_ENV_H_
