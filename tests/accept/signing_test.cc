// SPDX-License-Identifier: Apache-2.0
// Signed report directories: keys, the manifest, and verify catching one changed byte in any
// file, an added file, a removed one, an edited report.sig and the wrong key.
#include "accept/signing.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "testdata.h"

namespace parity::accept {
namespace {

namespace fs = std::filesystem;
using ::parity::testing::TempDir;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A report directory with a few files, signed with a fresh key; the key's path is returned.
std::string MakeSignedReport(const TempDir& tmp) {
  Write(tmp.File("out/report.json"), R"({"verdict":"pass"})");
  Write(tmp.File("out/report.html"), "<html>abc</html>");
  Write(tmp.File("out/data/telemetry.jsonl"), "{}\n{}\n");
  Write(tmp.File("out/empty.txt"), "");
  EXPECT_TRUE(GenerateKeyPair(tmp.File("key")).ok());
  EXPECT_TRUE(SignDirectory(tmp.File("out"), tmp.File("key")).ok());
  return tmp.File("key");
}

TEST(Signing, HashesAreSha256) {
  TempDir tmp;
  Write(tmp.File("d/abc"), "abc");
  Write(tmp.File("d/sub/none"), "");
  auto files = HashDirectory(tmp.File("d"));
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 2u);
  // FIPS 180-2's test vector, and the hash of nothing.
  EXPECT_EQ((*files)[0].path, "abc");
  EXPECT_EQ((*files)[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ((*files)[0].bytes, 3u);
  EXPECT_EQ((*files)[1].path, "sub/none");
  EXPECT_EQ((*files)[1].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ManifestText(*files),
            "parity-signature v1\n"
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 3 abc\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 sub/none\n");
}

TEST(Signing, KeysAreWrittenOnceAndPrivately) {
  TempDir tmp;
  auto id = GenerateKeyPair(tmp.File("key"));
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id->size(), 16u);
  struct stat st {};
  ASSERT_EQ(::stat((tmp.File("key")).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(Read(tmp.File("key.pub")).find(*id), std::string::npos);
  EXPECT_EQ(Read(tmp.File("key.pub")).find("secret_key"), std::string::npos);
  const std::string before = Read(tmp.File("key"));
  auto again = GenerateKeyPair(tmp.File("key"));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("never overwritten"), std::string::npos);
  EXPECT_EQ(Read(tmp.File("key")), before);
}

TEST(Signing, VerifiesAndNamesEveryChange) {
  TempDir tmp;
  const std::string key = MakeSignedReport(tmp);
  auto v = VerifyDirectory(tmp.File("out"), tmp.File("key.pub"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->ok());
  EXPECT_TRUE(v->key_trusted);
  // One byte of each file changed in turn, then put back.
  for (const char* name : {"report.json", "report.html", "data/telemetry.jsonl"}) {
    const std::string path = tmp.File(std::string("out/") + name);
    const std::string original = Read(path);
    std::string edited = original;
    edited[edited.size() / 2] ^= 0x01;
    Write(path, edited);
    v = VerifyDirectory(tmp.File("out"), tmp.File("key.pub"));
    ASSERT_TRUE(v.ok());
    EXPECT_FALSE(v->ok()) << name;
    EXPECT_TRUE(v->signature_valid);
    EXPECT_EQ(v->changed, std::vector<std::string>{name});
    Write(path, original);
  }
  Write(tmp.File("out/empty.txt"), "x");  // a byte added to an empty file
  v = VerifyDirectory(tmp.File("out"), std::nullopt);
  EXPECT_EQ(v->changed, std::vector<std::string>{"empty.txt"});
  Write(tmp.File("out/empty.txt"), "");
  Write(tmp.File("out/data/extra.csv"), "1\n");
  v = VerifyDirectory(tmp.File("out"), std::nullopt);
  EXPECT_EQ(v->added, std::vector<std::string>{"data/extra.csv"});
  fs::remove(tmp.File("out/data/extra.csv"));
  fs::remove(tmp.File("out/report.html"));
  v = VerifyDirectory(tmp.File("out"), std::nullopt);
  EXPECT_EQ(v->missing, std::vector<std::string>{"report.html"});
  EXPECT_TRUE(v->changed.empty());
  EXPECT_TRUE(v->added.empty());
}

TEST(Signing, AnEditedSignatureFileOrAnotherKeyFails) {
  TempDir tmp;
  MakeSignedReport(tmp);
  ASSERT_TRUE(GenerateKeyPair(tmp.File("other")).ok());
  auto v = VerifyDirectory(tmp.File("out"), tmp.File("other.pub"));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->signature_valid);
  EXPECT_FALSE(v->ok());
  // A file changed and its new hash written into report.sig: the signature no longer matches.
  Write(tmp.File("out/report.json"), R"({"verdict":"fail"})");
  const auto files = HashDirectory(tmp.File("out"));
  std::string sig = Read(tmp.File("out/report.sig"));
  const std::string old_hash = "\"sha256\": \"";
  std::size_t at = sig.find("report.json");
  at = sig.find(old_hash, at) + old_hash.size();
  for (const FileHash& f : *files) {
    if (f.path == "report.json") sig.replace(at, 64, f.sha256);
  }
  sig.replace(sig.find("\"bytes\": 18"), 11, "\"bytes\": 18");  // same length, still 18
  Write(tmp.File("out/report.sig"), sig);
  v = VerifyDirectory(tmp.File("out"), std::nullopt);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->changed.empty());
  EXPECT_FALSE(v->signature_valid);
  EXPECT_FALSE(v->ok());
}

TEST(Signing, BadInputIsAnError) {
  TempDir tmp;
  Write(tmp.File("out/a"), "a");
  auto v = VerifyDirectory(tmp.File("out"), std::nullopt);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("report.sig"), std::string::npos);
  Write(tmp.File("out/report.sig"), "{\"format\":\"parity-signature\",\"version\":1}");
  v = VerifyDirectory(tmp.File("out"), std::nullopt);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("ed25519"), std::string::npos);
  fs::create_symlink("a", tmp.File("out/link"));
  ASSERT_TRUE(GenerateKeyPair(tmp.File("key")).ok());
  const Status signed_link = SignDirectory(tmp.File("out"), tmp.File("key"));
  ASSERT_FALSE(signed_link.ok());
  EXPECT_NE(signed_link.message().find("link"), std::string::npos);
  fs::remove(tmp.File("out/link"));
  // A public key where the secret key should be.
  const Status wrong = SignDirectory(tmp.File("out"), tmp.File("key.pub"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("parity-secret-key"), std::string::npos);
}

}  // namespace
}  // namespace parity::accept
