// SPDX-License-Identifier: Apache-2.0
// Built-in LeakSanitizer suppressions for the test binary, for third-party runtimes only.
// LLVM's OpenMP runtime keeps its thread-team descriptors when the team size changes, which
// the thread-count tests do on purpose.
extern "C" const char* __lsan_default_suppressions() { return "leak:libomp.so\n"; }
