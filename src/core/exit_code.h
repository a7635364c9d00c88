// SPDX-License-Identifier: Apache-2.0
// Process exit codes, as fixed by docs/DESIGN.md.
#ifndef PARITY_CORE_EXIT_CODE_H_
#define PARITY_CORE_EXIT_CODE_H_

#include "core/status.h"

namespace parity {

enum ExitCode : int {
  kExitOk = 0,             ///< ran, and every check passed
  kExitCheckFailed = 1,    ///< ran, and at least one check failed
  kExitUsage = 2,          ///< usage error or invalid input
  kExitUnavailable = 3,    ///< nothing that was asked for can run here
  kExitInterrupted = 130,  ///< interrupted by a signal
};

/// The exit code a failed status maps to (never kExitOk or kExitCheckFailed).
inline int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kUnavailable:
      return kExitUnavailable;
    case StatusCode::kInvalidInput:
    case StatusCode::kInternal:
      break;
  }
  return kExitUsage;
}

}  // namespace parity

#endif  // PARITY_CORE_EXIT_CODE_H_
