// SPDX-License-Identifier: Apache-2.0
#include "accept/signing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "core/file_util.h"
#include "core/json_util.h"

namespace parity::accept {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxKeyFileBytes = 64 * 1024;
constexpr std::size_t kMaxSignatureFileBytes = std::size_t{64} << 20;

Status Init() {
  if (sodium_init() < 0) return Status::Internal("libsodium failed to initialise");
  return Status::Ok();
}

std::string Hex(const unsigned char* bytes, std::size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes, n);
  out.pop_back();
  return out;
}

std::string Base64(const unsigned char* bytes, std::size_t n) {
  std::string out(sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes, n, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

/// Exactly `n` bytes from base64 text; false when the text is not that.
bool FromBase64(const std::string& text, unsigned char* out, std::size_t n) {
  std::size_t len = 0;
  if (sodium_base642bin(out, n, text.data(), text.size(), nullptr, &len, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0) {
    return false;
  }
  return len == n;
}

std::string KeyId(const unsigned char* public_key) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, public_key, crypto_sign_PUBLICKEYBYTES);
  return Hex(digest, 8);
}

Status WriteNewFile(const std::string& path, const std::string& text, int mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return Status::Invalid(
        path, errno == EEXIST ? "exists; a key is never overwritten" : std::strerror(errno));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return Status::Invalid(path, std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return Status::Invalid(path, std::strerror(errno));
  return Status::Ok();
}

Result<Json> ReadJson(const std::string& path, std::size_t max_bytes, std::string_view what,
                      std::string_view format) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, max_bytes, what));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Status::Invalid(path, "not a JSON object");
  if (StringField(doc, "format") != format || !doc.contains("version") || doc["version"] != 1) {
    return Status::Invalid(path, fmt::format("not a {} version 1 document", format));
  }
  if (StringField(doc, "algorithm") != "ed25519") {
    return Status::Invalid(path, "the algorithm is not ed25519");
  }
  return doc;
}

Result<std::vector<unsigned char>> KeyField(const Json& doc, const std::string& path,
                                            const char* field, std::size_t n) {
  std::vector<unsigned char> key(n);
  if (!FromBase64(StringField(doc, field), key.data(), n)) {
    return Status::Invalid(path, fmt::format("'{}' is not {} bytes of base64", field, n));
  }
  return key;
}

Result<FileHash> HashFile(const fs::path& file, const std::string& relative) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Invalid(file.string(), std::strerror(errno));
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  std::vector<unsigned char> buffer(std::size_t{1} << 20);
  FileHash hash;
  hash.path = relative;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::Invalid(file.string(), std::strerror(err));
    }
    if (n == 0) break;
    crypto_hash_sha256_update(&state, buffer.data(), static_cast<unsigned long long>(n));
    hash.bytes += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  hash.sha256 = Hex(digest, sizeof digest);
  return hash;
}

}  // namespace

Result<std::string> GenerateKeyPair(const std::string& path) {
  PARITY_RETURN_IF_ERROR(Init());
  const std::string pub = path + ".pub";
  std::error_code ec;
  if (fs::exists(pub, ec)) return Status::Invalid(pub, "exists; a key is never overwritten");
  unsigned char pk[crypto_sign_PUBLICKEYBYTES];
  unsigned char sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_keypair(pk, sk);
  const std::string id = KeyId(pk);
  Json secret = Document("parity-secret-key", 1);
  secret["algorithm"] = "ed25519";
  secret["key_id"] = id;
  secret["public_key"] = Base64(pk, sizeof pk);
  secret["secret_key"] = Base64(sk, sizeof sk);
  sodium_memzero(sk, sizeof sk);
  Json public_doc = Document("parity-public-key", 1);
  public_doc["algorithm"] = "ed25519";
  public_doc["key_id"] = id;
  public_doc["public_key"] = Base64(pk, sizeof pk);
  std::string secret_text = Dump(secret) + "\n";
  const Status written = WriteNewFile(path, secret_text, 0600);
  sodium_memzero(secret_text.data(), secret_text.size());
  PARITY_RETURN_IF_ERROR(written);
  if (Status s = WriteNewFile(pub, Dump(public_doc) + "\n", 0644); !s.ok()) {
    ::unlink(path.c_str());
    return s;
  }
  return id;
}

Result<std::vector<FileHash>> HashDirectory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::Invalid(dir, "not a directory");
  std::vector<FileHash> files;
  auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
  if (ec) return Status::Invalid(dir, ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Invalid(dir, ec.message());
    const fs::directory_entry& entry = *it;
    const std::string relative = entry.path().lexically_relative(dir).generic_string();
    const fs::file_status st = entry.symlink_status(ec);
    if (fs::is_directory(st)) continue;
    if (!fs::is_regular_file(st)) {
      return Status::Invalid(
          entry.path().string(),
          "neither a regular file nor a directory (a link?): it can't be signed");
    }
    if (relative == kSignatureFile) continue;
    PARITY_ASSIGN_OR_RETURN(FileHash hash, HashFile(entry.path(), relative));
    files.push_back(std::move(hash));
  }
  std::sort(files.begin(), files.end(),
            [](const FileHash& a, const FileHash& b) { return a.path < b.path; });
  return files;
}

std::string ManifestText(const std::vector<FileHash>& files) {
  std::string text = "parity-signature v1\n";
  for (const FileHash& f : files) text += fmt::format("{} {} {}\n", f.sha256, f.bytes, f.path);
  return text;
}

Status SignDirectory(const std::string& dir, const std::string& key_path) {
  PARITY_RETURN_IF_ERROR(Init());
  PARITY_ASSIGN_OR_RETURN(Json key,
                          ReadJson(key_path, kMaxKeyFileBytes, "key file", "parity-secret-key"));
  PARITY_ASSIGN_OR_RETURN(auto sk,
                          KeyField(key, key_path, "secret_key", crypto_sign_SECRETKEYBYTES));
  PARITY_ASSIGN_OR_RETURN(auto pk,
                          KeyField(key, key_path, "public_key", crypto_sign_PUBLICKEYBYTES));
  unsigned char derived[crypto_sign_PUBLICKEYBYTES];
  crypto_sign_ed25519_sk_to_pk(derived, sk.data());
  if (sodium_memcmp(derived, pk.data(), sizeof derived) != 0) {
    sodium_memzero(sk.data(), sk.size());
    return Status::Invalid(key_path, "the public key does not belong to the secret key");
  }
  auto files = HashDirectory(dir);
  if (!files.ok()) {
    sodium_memzero(sk.data(), sk.size());
    return files.status();
  }
  const std::string manifest = ManifestText(*files);
  unsigned char signature[crypto_sign_BYTES];
  crypto_sign_detached(signature, nullptr, reinterpret_cast<const unsigned char*>(manifest.data()),
                       manifest.size(), sk.data());
  sodium_memzero(sk.data(), sk.size());
  Json doc = Document("parity-signature", 1);
  doc["algorithm"] = "ed25519";
  doc["key_id"] = KeyId(pk.data());
  doc["public_key"] = Base64(pk.data(), pk.size());
  Json list = Json::array();
  for (const FileHash& f : *files) {
    list.push_back({{"path", f.path}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  }
  doc["files"] = std::move(list);
  doc["signature"] = Base64(signature, sizeof signature);
  return WriteFileAtomically((fs::path(dir) / kSignatureFile).string(),
                             {AsBytes(Dump(doc) + "\n")});
}

Result<Verification> VerifyDirectory(const std::string& dir,
                                     const std::optional<std::string>& public_key_path) {
  PARITY_RETURN_IF_ERROR(Init());
  const std::string sig_path = (fs::path(dir) / kSignatureFile).string();
  PARITY_ASSIGN_OR_RETURN(
      Json sig, ReadJson(sig_path, kMaxSignatureFileBytes, "signature file", "parity-signature"));
  PARITY_ASSIGN_OR_RETURN(auto recorded_pk,
                          KeyField(sig, sig_path, "public_key", crypto_sign_PUBLICKEYBYTES));
  PARITY_ASSIGN_OR_RETURN(auto signature, KeyField(sig, sig_path, "signature", crypto_sign_BYTES));
  if (!sig.contains("files") || !sig["files"].is_array()) {
    return Status::Invalid(sig_path, "'files' is not a list");
  }
  std::vector<FileHash> recorded;
  for (const Json& f : sig["files"]) {
    if (!f.is_object() || !f.contains("bytes") || !f["bytes"].is_number_unsigned()) {
      return Status::Invalid(sig_path, "a file entry without 'path', 'bytes' and 'sha256'");
    }
    // Filled in place: moving a FileHash in trips GCC 12's -Warray-bounds false positive on
    // std::string's move constructor.
    FileHash& hash = recorded.emplace_back();
    hash.path = StringField(f, "path");
    hash.bytes = f["bytes"].get<std::uint64_t>();
    hash.sha256 = StringField(f, "sha256");
    if (hash.path.empty() || hash.sha256.size() != 64) {
      return Status::Invalid(sig_path, "a file entry without 'path', 'bytes' and 'sha256'");
    }
  }
  Verification v;
  std::vector<unsigned char> pk = recorded_pk;
  if (public_key_path) {
    PARITY_ASSIGN_OR_RETURN(
        Json key, ReadJson(*public_key_path, kMaxKeyFileBytes, "key file", "parity-public-key"));
    PARITY_ASSIGN_OR_RETURN(
        pk, KeyField(key, *public_key_path, "public_key", crypto_sign_PUBLICKEYBYTES));
    v.key_trusted = true;
  }
  v.key_id = KeyId(pk.data());
  // The signature covers the manifest as recorded, whatever order the file lists it in.
  std::vector<FileHash> sorted = recorded;
  std::sort(sorted.begin(), sorted.end(),
            [](const FileHash& a, const FileHash& b) { return a.path < b.path; });
  const std::string manifest = ManifestText(sorted);
  v.signature_valid = crypto_sign_verify_detached(
                          signature.data(), reinterpret_cast<const unsigned char*>(manifest.data()),
                          manifest.size(), pk.data()) == 0;
  PARITY_ASSIGN_OR_RETURN(std::vector<FileHash> now, HashDirectory(dir));
  std::map<std::string, const FileHash*> by_path;
  for (const FileHash& f : now) by_path[f.path] = &f;
  std::set<std::string> seen;
  for (const FileHash& f : sorted) {
    seen.insert(f.path);
    auto it = by_path.find(f.path);
    if (it == by_path.end()) {
      v.missing.push_back(f.path);
    } else if (it->second->sha256 != f.sha256 || it->second->bytes != f.bytes) {
      v.changed.push_back(f.path);
    }
  }
  for (const FileHash& f : now) {
    if (!seen.count(f.path)) v.added.push_back(f.path);
  }
  return v;
}

}  // namespace parity::accept
