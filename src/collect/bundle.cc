// SPDX-License-Identifier: Apache-2.0
#include "collect/bundle.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/file_util.h"

namespace parity::collect {

namespace fs = std::filesystem;

Result<BundleLock> BundleLock::Acquire(const std::string& bundle) {
  const std::string path = bundle + "/.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Invalid(path, std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Status::Invalid(bundle, "another parity collect is writing this bundle");
  }
  return BundleLock(fd);
}

BundleLock::~BundleLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status PrepareBundle(const std::string& bundle) {
  std::error_code ec;
  const fs::file_status st = fs::status(bundle, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) return Status::Invalid(bundle, "exists and is not a directory");
    const bool has_manifest = fs::exists(fs::path(bundle) / "manifest.json", ec);
    if (!has_manifest) {
      for (const fs::directory_entry& entry : fs::directory_iterator(bundle, ec)) {
        // A lock file is all a collect killed before its first manifest leaves.
        if (entry.path().filename() == ".lock" || entry.path().filename() == "stages" ||
            entry.path().filename() == "logs") {
          continue;
        }
        return Status::Invalid(bundle,
                               "exists, is not empty and is not a parity bundle (no "
                               "manifest.json); give a new directory");
      }
    }
  }
  for (const char* sub : {"", "/stages", "/logs"}) {
    fs::create_directories(bundle + sub, ec);
    if (ec) return Status::Invalid(bundle + sub, ec.message());
  }
  return Status::Ok();
}

Result<std::optional<Json>> LoadManifest(const std::string& bundle) {
  const std::string path = bundle + "/manifest.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<Json>();
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, std::size_t{64} << 20, "manifest"));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Status::Invalid(path, "not a JSON object");
  if (StringField(doc, "format") != "parity-bundle") {
    return Status::Invalid(path, "not a parity-bundle manifest");
  }
  if (doc.value("version", 0) != 1) {
    return Status::Invalid(path, "a parity-bundle version this parity does not know (it reads 1)");
  }
  if (!doc.contains("stages") || !doc["stages"].is_array() || !doc.contains("uid") ||
      !doc["uid"].is_string()) {
    return Status::Invalid(path, "a parity-bundle manifest without 'uid' or 'stages'");
  }
  return std::optional<Json>(std::move(doc));
}

Status WriteManifest(const std::string& bundle, const Json& manifest) {
  return WriteFileAtomically(bundle + "/manifest.json", {AsBytes(Dump(manifest) + "\n")});
}

}  // namespace parity::collect
