// SPDX-License-Identifier: Apache-2.0
// Vendor libraries and plugins loaded at run time: dlopen, and a library's calls resolved
// into function pointers with the first required one it lacks named.
#ifndef PARITY_CORE_DYNLIB_H_
#define PARITY_CORE_DYNLIB_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "core/status.h"

namespace parity {

/// Loads a library with dlopen (RTLD_NOW | RTLD_LOCAL); it stays loaded until the caller
/// dlcloses it. kUnavailable with dlerror's text, or "<path>: cannot load" when it has none.
Result<void*> OpenLibrary(const std::string& path);

/// The address `library` exports under the first of `names` that it has, and that name;
/// {nullptr, nullptr} when it has none of them.
std::pair<void*, const char*> FindSymbol(void* library, std::initializer_list<const char*> names);

/// Resolves a library's calls into function pointers, required or optional, remembering
/// the first required call the library lacks.
class SymbolResolver {
 public:
  /// `library` from OpenLibrary; `path` is what messages name it by.
  SymbolResolver(void* library, std::string path) : library_(library), path_(std::move(path)) {}

  /// Points `*out` at the first of `names` the library exports (alternatives, newest first);
  /// returns that name, or nullptr with `*out` null. Missing, it is remembered: all its names,
  /// joined by " and ", unless an earlier required one was missing.
  template <typename Fn>
  const char* Require(std::initializer_list<const char*> names, Fn* out) {
    const char* found = Optional(names, out);
    if (found == nullptr && missing_.empty()) missing_ = JoinNames(names);
    return found;
  }

  /// As Require, for a call parity can do without: nothing is remembered when it is missing.
  template <typename Fn>
  const char* Optional(std::initializer_list<const char*> names, Fn* out) {
    const auto [symbol, name] = FindSymbol(library_, names);
    *out = reinterpret_cast<Fn>(symbol);
    return name;
  }

  /// The first required call not found; "" when every one was.
  const std::string& missing() const { return missing_; }

  /// Ok when every required call was found; else kUnavailable "<path>: lacks <missing>".
  Status status() const;

 private:
  static std::string JoinNames(std::initializer_list<const char*> names);

  void* library_;
  std::string path_;
  std::string missing_;
};

}  // namespace parity

#endif  // PARITY_CORE_DYNLIB_H_
