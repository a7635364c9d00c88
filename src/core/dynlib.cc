// SPDX-License-Identifier: Apache-2.0
#include "core/dynlib.h"

#include <dlfcn.h>

namespace parity {

Result<void*> OpenLibrary(const std::string& path) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  const char* error = dlerror();
  return Status::Unavailable(error != nullptr ? std::string(error) : path + ": cannot load");
}

std::pair<void*, const char*> FindSymbol(void* library, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name); symbol != nullptr) return {symbol, name};
  }
  return {nullptr, nullptr};
}

Status SymbolResolver::status() const {
  if (missing_.empty()) return Status::Ok();
  return Status::Unavailable(path_ + ": lacks " + missing_);
}

std::string SymbolResolver::JoinNames(std::initializer_list<const char*> names) {
  std::string all;
  for (const char* name : names) all += (all.empty() ? "" : " and ") + std::string(name);
  return all;
}

}  // namespace parity
