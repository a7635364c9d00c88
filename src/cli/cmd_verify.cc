// SPDX-License-Identifier: Apache-2.0
// parity verify: a signed report directory checked, file by file.
#include <fmt/format.h>

#include <optional>

#include "accept/signing.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"

namespace parity::cli {

int RunVerify(int argc, char** argv) {
  CommonOptions common;
  std::string dir, pubkey;
  auto app = MakeApp(
      "verify",
      "Check a signed report directory: the Ed25519 signature in OUT/report.sig over the "
      "SHA-256 of every file, and every file against it. Exit 0 when the signature and every "
      "hash check, 1 naming each file that changed, was added or is missing (or a signature "
      "that does not match), 2 when report.sig or the key can't be read. Without --pubkey the "
      "key recorded in report.sig is used: that proves the files are as signed, not who signed.",
      &common);
  app->add_option("out", dir, "the report directory")->required();
  app->add_option("--pubkey", pubkey, "the public key that must have signed (KEY.pub)")
      ->option_text("KEY.pub");
  if (auto code = Parse(*app, common, argc, argv)) return *code;
  auto v = accept::VerifyDirectory(
      dir, pubkey.empty() ? std::nullopt : std::optional<std::string>(pubkey));
  if (!v.ok()) return Fail(v.status());
  if (common.human()) {
    std::string text;
    for (const std::string& f : v->changed) text += fmt::format("CHANGED  {}\n", f);
    for (const std::string& f : v->added) text += fmt::format("ADDED    {}\n", f);
    for (const std::string& f : v->missing) text += fmt::format("MISSING  {}\n", f);
    if (!v->signature_valid) {
      text += v->key_trusted
                  ? fmt::format("BAD SIGNATURE: report.sig was not signed by key {} ({})\n",
                                v->key_id, pubkey)
                  : "BAD SIGNATURE: report.sig does not match its own key: it was edited\n";
    }
    if (v->ok()) {
      text += v->key_trusted ? fmt::format("verified: every file as signed by key {}\n", v->key_id)
                             : fmt::format(
                                   "verified: every file as signed by key {} (the key recorded "
                                   "in report.sig; give --pubkey to check who signed)\n",
                                   v->key_id);
    }
    std::fputs(text.c_str(), stdout);
  }
  Json doc = Document("parity-verify", 1);
  doc["verified"] = v->ok();
  doc["signature_valid"] = v->signature_valid;
  doc["key_id"] = v->key_id;
  doc["key_trusted"] = v->key_trusted;
  doc["changed"] = v->changed;
  doc["added"] = v->added;
  doc["missing"] = v->missing;
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return v->ok() ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
