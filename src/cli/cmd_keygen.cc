// SPDX-License-Identifier: Apache-2.0
// parity keygen: an Ed25519 key pair for signing reports.
#include <fmt/format.h>

#include "accept/signing.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"

namespace parity::cli {

int RunKeygen(int argc, char** argv) {
  CommonOptions common;
  std::string path;
  auto app = MakeApp("keygen",
                     "Make an Ed25519 key pair (libsodium) for signing reports: the secret key "
                     "to KEY (mode 0600), the public key to KEY.pub. Existing files are never "
                     "overwritten. Give KEY.pub to whoever checks reports (parity verify "
                     "--pubkey).",
                     &common);
  app->add_option("-o,--output", path, "the secret key file; the public key goes to KEY.pub")
      ->option_text("KEY")
      ->required();
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  auto id = accept::GenerateKeyPair(path);
  if (!id.ok()) return Fail(id.status());
  if (common.human()) {
    std::printf("key %s: secret key %s (keep it private), public key %s.pub\n", id->c_str(),
                path.c_str(), path.c_str());
  }
  Json doc = Document("parity-keygen", 1);
  doc["key_id"] = *id;
  doc["secret_key"] = path;
  doc["public_key"] = path + ".pub";
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return kExitOk;
}

}  // namespace parity::cli
