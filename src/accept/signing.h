// SPDX-License-Identifier: Apache-2.0
// Signed reports: an Ed25519 key pair (libsodium), and a signature over a manifest of the
// SHA-256 of every file in a report directory, so that no file can be changed, added or removed
// afterwards without `parity verify` saying which.
//
// KEY (mode 0600) and KEY.pub are JSON:
//   {"format":"parity-secret-key","version":1,"algorithm":"ed25519","key_id":..,
//    "public_key":BASE64,"secret_key":BASE64}
//   {"format":"parity-public-key","version":1,"algorithm":"ed25519","key_id":..,
//    "public_key":BASE64}
// key_id is the first 16 hex digits of the SHA-256 of the public key.
//
// DIR/report.sig is JSON:
//   {"format":"parity-signature","version":1,"algorithm":"ed25519","key_id":..,
//    "public_key":BASE64,"files":[{"path":..,"bytes":..,"sha256":..}],"signature":BASE64}
// The signature is over the manifest text: "parity-signature v1\n", then a line
// "SHA256 BYTES PATH\n" per file, sorted by path (bytes of UTF-8, '/' separators, relative to
// DIR, report.sig itself left out).
#ifndef PARITY_ACCEPT_SIGNING_H_
#define PARITY_ACCEPT_SIGNING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace parity::accept {

inline constexpr char kSignatureFile[] = "report.sig";

/// Makes a key pair: the secret key to `path` (mode 0600), the public key to `path`.pub.
/// kInvalidInput when either exists (keys are never overwritten) or can't be written.
/// Returns the key id.
Result<std::string> GenerateKeyPair(const std::string& path);

/// One file of a signed directory.
struct FileHash {
  std::string path;  ///< relative, '/' separators
  std::uint64_t bytes = 0;
  std::string sha256;  ///< 64 lowercase hex digits
};

/// Every regular file under `dir` but report.sig, sorted by path, hashed. kInvalidInput for
/// something that is neither a regular file nor a directory (a link, a FIFO), or a file that
/// can't be read.
Result<std::vector<FileHash>> HashDirectory(const std::string& dir);

/// The text the signature covers (see the header comment).
std::string ManifestText(const std::vector<FileHash>& files);

/// Signs `dir` with the secret key at `key_path`: writes DIR/report.sig.
Status SignDirectory(const std::string& dir, const std::string& key_path);

/// What verifying a directory found.
struct Verification {
  bool signature_valid = false;  ///< the signature matches the recorded manifest and key
  std::string key_id;
  /// True when the key was given (--pubkey) and is the one that signed; false when only the
  /// key recorded in report.sig was used, which proves integrity but not who signed.
  bool key_trusted = false;
  std::vector<std::string> changed, added, missing;  ///< relative paths

  bool ok() const { return signature_valid && changed.empty() && added.empty() && missing.empty(); }
};

/// Checks DIR/report.sig and every file under DIR. `public_key_path` (a KEY.pub) is the key
/// that must have signed; without it the key recorded in report.sig is used. kInvalidInput for
/// a missing or malformed report.sig or key file; a key that is not the signer's is a
/// Verification with signature_valid false.
Result<Verification> VerifyDirectory(const std::string& dir,
                                     const std::optional<std::string>& public_key_path);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_SIGNING_H_
