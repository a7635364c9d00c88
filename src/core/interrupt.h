// SPDX-License-Identifier: Apache-2.0
// SIGINT/SIGTERM handling: the process exits with code 130, as docs/DESIGN.md fixes.
#ifndef PARITY_CORE_INTERRUPT_H_
#define PARITY_CORE_INTERRUPT_H_

namespace parity {

/// Installs handlers so that SIGINT and SIGTERM end the process at once with exit code 130
/// and the line "parity: interrupted" on stderr. Commands with state to save install
/// their own handling instead.
void ExitOnInterrupt();

}  // namespace parity

#endif  // PARITY_CORE_INTERRUPT_H_
