// SPDX-License-Identifier: Apache-2.0
#include "workload/python_env.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/process.h"

#ifndef PARITY_SOURCE_PYTHON_DIR
#define PARITY_SOURCE_PYTHON_DIR ""
#endif

namespace parity::workload {
namespace {

bool Executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Whether `python` runs and imports torch (the check takes a second or two: torch is large).
bool ImportsTorch(const std::string& python) {
  ProcessSpec spec;
  spec.argv = {python, "-c", "import torch"};
  spec.timeout = 120.0;
  const ProcessResult r = RunProcess(spec, nullptr);
  return r.started && r.exit_code == 0;
}

std::string ExecutableDirectory() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

Result<std::string> FindPython(const std::string& explicit_python) {
  auto usable = [](const std::string& python, const char* from) -> Result<std::string> {
    if (python.find('/') != std::string::npos ? Executable(python) : true) return python;
    return Status::Invalid("", fmt::format("{} ({}): not an executable file", python, from));
  };
  if (!explicit_python.empty()) return usable(explicit_python, "--python");
  if (const char* env = std::getenv("PARITY_PYTHON"); env != nullptr && *env != '\0') {
    return usable(env, "$PARITY_PYTHON");
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (dir.empty()) continue;
      const std::string candidate = dir + "/python3";
      if (Executable(candidate) && ImportsTorch(candidate)) return candidate;
    }
  }
  if (Executable("/usr/bin/python3")) return std::string("/usr/bin/python3");
  return Status::Unavailable(
      "no Python interpreter: give --python PY or set PARITY_PYTHON (none of the python3 on "
      "PATH imports torch, and /usr/bin/python3 does not exist)");
}

std::string ParityPythonDirectory() {
  std::error_code ec;
  const std::string exe_dir = ExecutableDirectory();
  const std::string installed = exe_dir + "/../lib/python3/dist-packages";
  const std::string source = PARITY_SOURCE_PYTHON_DIR;
  if (!exe_dir.empty() && std::filesystem::is_directory(installed + "/parity_workloads", ec)) {
    return std::filesystem::path(installed).lexically_normal().string();
  }
  if (!source.empty() && std::filesystem::is_directory(source + "/parity_workloads", ec)) {
    return source;
  }
  return "";
}

std::map<std::string, std::string> WorkloadEnvironment() {
  // parity's own directory first: a stray parity_workloads or parity_dump on the user's path
  // must not stand in for the harness.
  std::string path = ParityPythonDirectory();
  if (const char* current = std::getenv("PYTHONPATH"); current != nullptr && *current != '\0') {
    if (!path.empty()) path += ':';
    path.append(current);
  }
  std::map<std::string, std::string> env;
  if (!path.empty()) env["PYTHONPATH"] = path;
  return env;
}

}  // namespace parity::workload
