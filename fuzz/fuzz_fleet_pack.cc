// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a rank's packed bundle as rank 0 unpacks it. Whatever the bytes, nothing is
// written outside the target directory, and what was unpacked packs and unpacks again the same.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "fleet/pack.h"

namespace {

namespace fs = std::filesystem;

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_fleet_pack: %s\n", what);
  std::abort();
}

/// Regular files under `dir` by relative path, with their bytes.
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[fs::relative(e.path(), dir).generic_string()] =
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

/// A scratch directory for this process: root/out is unpacked into; root itself must hold
/// nothing else afterwards.
const fs::path& Root() {
  static const fs::path root = [] {
    std::string pattern = (fs::temp_directory_path() / "fuzz-fleet-pack-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) Fail("mkdtemp");
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(Root(), ec);
    });
    return fs::path(pattern);
  }();
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const fs::path& root = Root();
  const fs::path out = root / "out", again = root / "again";
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::remove_all(again, ec);
  const std::string_view packed(reinterpret_cast<const char*>(data), size);
  const parity::Status s = parity::fleet::UnpackDirectory(packed, out.string(), "fuzz");
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    if (e.path() != out) Fail("a file written outside the target directory");
  }
  if (!s.ok()) {
    if (s.message().rfind(out.string(), 0) != 0) Fail("an error without its path");
    return 0;
  }
  auto repacked = parity::fleet::PackDirectory(out.string(), std::size_t{1} << 30);
  if (!repacked.ok()) Fail("an unpacked tree does not pack");
  if (!parity::fleet::UnpackDirectory(*repacked, again.string(), "again").ok()) {
    Fail("a packed tree does not unpack");
  }
  if (Tree(out) != Tree(again)) Fail("the round trip changed the files");
  return 0;
}
