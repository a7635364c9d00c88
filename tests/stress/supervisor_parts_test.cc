// SPDX-License-Identifier: Apache-2.0
// The stress supervisor's parts: checkpoint files, the step ledger, --inject specs and the
// fault schedule.
#include <gtest/gtest.h>
#include <sodium.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "stress/checkpoint.h"
#include "stress/inject.h"
#include "stress/ledger.h"
#include "testdata.h"

namespace parity::stress {
namespace {

using ::parity::testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(Checkpoint, RoundTripsAndNamesSortByStep) {
  TempDir dir;
  const std::string payload(
      "weights\0and\xff"
      "bytes",
      17);
  const std::string path = dir.path() + "/" + CheckpointFileName(42);
  ASSERT_TRUE(WriteCheckpoint(path, 42, payload).ok());
  auto read = ReadCheckpoint(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->step, 42);
  EXPECT_EQ(read->payload, payload);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_LT(CheckpointFileName(9), CheckpointFileName(10));
  EXPECT_EQ(CheckpointFileName(7), "step-000000000007.ckpt");
}

TEST(Checkpoint, HeaderLayoutIsTheDocumentedOne) {
  TempDir dir;
  const std::string path = dir.path() + "/c.ckpt";
  ASSERT_TRUE(WriteCheckpoint(path, 258, "abc").ok());
  const std::string bytes = ReadAll(path);
  ASSERT_EQ(bytes.size(), 64u + 3u);
  EXPECT_EQ(bytes.substr(0, 8), "PARITYCK");
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), 1);   // version
  EXPECT_EQ(static_cast<unsigned char>(bytes[16]), 2);  // step 258 = 0x0102, little-endian
  EXPECT_EQ(static_cast<unsigned char>(bytes[17]), 1);
  EXPECT_EQ(static_cast<unsigned char>(bytes[24]), 3);  // payload bytes
  // The checksum is libsodium's BLAKE2b-256 of the 32 header bytes and the payload, computed
  // here in one call.
  unsigned char digest[32];
  ASSERT_GE(sodium_init(), 0);
  const std::string covered = bytes.substr(0, 32) + "abc";
  crypto_generichash(digest, 32, reinterpret_cast<const unsigned char*>(covered.data()),
                     covered.size(), nullptr, 0);
  EXPECT_EQ(bytes.substr(32, 32), std::string(reinterpret_cast<char*>(digest), 32));
  EXPECT_EQ(bytes.substr(64), "abc");
}

TEST(Checkpoint, ReadsAFileWrittenByPythonsHashlib) {
  // fuzz/corpus/stress_checkpoint/valid was packed by Python's struct and hashlib.blake2b
  // (digest_size=32), independently of parity's writer.
  auto read = ReadCheckpoint(testing::SourcePath("fuzz/corpus/stress_checkpoint/valid"));
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->step, 42);
  EXPECT_EQ(read->payload, "PARITYSW state");
  EXPECT_FALSE(ReadCheckpoint(testing::SourcePath("fuzz/corpus/stress_checkpoint/truncated")).ok());
}

TEST(Checkpoint, EveryFlippedByteIsDetected) {
  TempDir dir;
  const std::string path = dir.path() + "/c.ckpt";
  ASSERT_TRUE(WriteCheckpoint(path, 5, std::string(100, 'x')).ok());
  const std::string good = ReadAll(path);
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    WriteAll(path, bad);
    auto read = ReadCheckpoint(path);
    EXPECT_FALSE(read.ok()) << "byte " << i;
    if (!read.ok()) {
      EXPECT_EQ(read.status().code(), StatusCode::kInvalidInput);
      EXPECT_NE(read.status().message().find(path), std::string::npos);
    }
  }
}

TEST(Checkpoint, TruncatedAndForeignFilesAreRejected) {
  TempDir dir;
  const std::string path = dir.path() + "/c.ckpt";
  ASSERT_TRUE(WriteCheckpoint(path, 5, std::string(100, 'x')).ok());
  const std::string good = ReadAll(path);
  for (std::size_t n : {0u, 10u, 63u, 64u, 100u, 163u}) {
    WriteAll(path, good.substr(0, n));
    EXPECT_FALSE(ReadCheckpoint(path).ok()) << n << " bytes";
  }
  WriteAll(path, good + "extra");
  EXPECT_FALSE(ReadCheckpoint(path).ok());
  // A header claiming more than the cap is refused before anything is allocated.
  std::string huge = good;
  for (int i = 24; i < 32; ++i) huge[i] = '\xff';
  WriteAll(path, huge);
  auto read = ReadCheckpoint(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("payload bytes"), std::string::npos);
  EXPECT_FALSE(ReadCheckpoint(dir.path() + "/missing.ckpt").ok());
}

TEST(Checkpoint, WriteFailureLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.path() + "/c.ckpt";
  ASSERT_TRUE(WriteCheckpoint(path, 1, "first").ok());
  // A directory where the temporary file would go makes the write fail.
  std::filesystem::create_directory(path + ".tmp");
  const Status s = WriteCheckpoint(path, 2, "second");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("checkpoint not written"), std::string::npos);
  std::filesystem::remove(path + ".tmp");
  auto read = ReadCheckpoint(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->payload, "first");
}

TEST(Checkpoint, DigestIsBlake2bOfTheFile) {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  // Over one read block (1 MiB) so the streaming path is exercised.
  std::string bytes((1 << 20) + 12345, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + (i >> 9));
  WriteAll(path, bytes);
  unsigned char digest[32];
  ASSERT_GE(sodium_init(), 0);
  crypto_generichash(digest, 32, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                     nullptr, 0);
  std::string hex;
  for (unsigned char b : digest) {
    static const char* kHex = "0123456789abcdef";
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  auto got = FileDigest(path);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, hex);
  bytes[5] ^= 1;
  WriteAll(path, bytes);
  EXPECT_NE(*FileDigest(path), hex);
  EXPECT_FALSE(FileDigest(dir.path() + "/none").ok());
}

TEST(Checkpoint, ListAndPruneKeepTheNewest) {
  TempDir dir;
  for (int step : {50, 100, 150, 200, 250}) {
    ASSERT_TRUE(WriteCheckpoint(dir.path() + "/" + CheckpointFileName(step), step, "s").ok());
  }
  WriteAll(dir.path() + "/notes.txt", "not a checkpoint");
  ASSERT_EQ(ListCheckpoints(dir.path()).size(), 5u);
  PruneCheckpoints(dir.path(), 3);
  const auto left = ListCheckpoints(dir.path());
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0], dir.path() + "/" + CheckpointFileName(150));
  EXPECT_EQ(left[2], dir.path() + "/" + CheckpointFileName(250));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/notes.txt"));
}

TEST(Ledger, ConsecutiveStepsAreNeitherLostNorDuplicated) {
  StepLedger ledger;
  for (int s = 1; s <= 100; ++s) ledger.Record(s, s * 0.5);
  EXPECT_EQ(ledger.last(), 100);
  EXPECT_EQ(ledger.lost(), 0);
  EXPECT_EQ(ledger.duplicated(), 0);
  EXPECT_EQ(ledger.redone(), 0);
}

TEST(Ledger, RestartFromCheckpointRedoesStepsWithoutLoss) {
  StepLedger ledger;
  for (int s = 1; s <= 37; ++s) ledger.Record(s, 1.0 / s);
  ledger.Resume(30);  // killed after 37, checkpoint at 30
  for (int s = 31; s <= 60; ++s) ledger.Record(s, 1.0 / s);
  EXPECT_EQ(ledger.redone(), 7);
  EXPECT_EQ(ledger.lost(), 0);
  EXPECT_EQ(ledger.duplicated(), 0);
  EXPECT_EQ(ledger.redo_mismatches(), 0);
  EXPECT_EQ(ledger.last(), 60);
}

TEST(Ledger, AResumeThatIgnoresItsCheckpointDuplicatesSteps) {
  StepLedger ledger;
  for (int s = 1; s <= 20; ++s) ledger.Record(s, std::nullopt);
  ledger.Resume(20);
  for (int s = 1; s <= 25; ++s) ledger.Record(s, std::nullopt);  // started over
  EXPECT_EQ(ledger.duplicated(), 20);
  EXPECT_EQ(ledger.lost(), 0);
  EXPECT_EQ(ledger.last(), 25);
}

TEST(Ledger, SkippedStepsAreLost) {
  StepLedger ledger;
  for (int s = 1; s <= 10; ++s) ledger.Record(s, std::nullopt);
  ledger.Record(14, std::nullopt);
  EXPECT_EQ(ledger.lost(), 3);
  ledger.Resume(20);  // a checkpoint past everything reported
  EXPECT_EQ(ledger.lost(), 9);
}

TEST(Ledger, ARedoneStepWithAnotherLossIsAMismatch) {
  StepLedger ledger;
  for (int s = 1; s <= 10; ++s) ledger.Record(s, 2.0 * s);
  ledger.Resume(5);
  ledger.Record(6, 12.0);
  ledger.Record(7, std::nextafter(14.0, 15.0));  // one ulp off
  ledger.Record(8, 16.0);
  EXPECT_EQ(ledger.redo_mismatches(), 1);
  ASSERT_TRUE(ledger.first_mismatch());
  EXPECT_EQ(*ledger.first_mismatch(), 7);
}

TEST(Inject, ParsesEveryForm) {
  auto bare = ParseInjectSpec("kill");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->kind, FaultKind::kKill);
  EXPECT_EQ(bare->mode, InjectMode::kOnce);
  auto every = ParseInjectSpec("hang:every=2.5");
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->mode, InjectMode::kEvery);
  EXPECT_DOUBLE_EQ(every->value, 2.5);
  auto p = ParseInjectSpec("corrupt-checkpoint:p=0.25");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, FaultKind::kCorruptCheckpoint);
  EXPECT_EQ(p->mode, InjectMode::kProb);
  auto at = ParseInjectSpec("disk-full:at=0");
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->mode, InjectMode::kAt);
  for (const char* kind : {"kill", "hang", "corrupt-checkpoint", "disk-full", "oom", "sdc"}) {
    auto spec = ParseInjectSpec(kind);
    ASSERT_TRUE(spec.ok()) << kind;
    EXPECT_EQ(FaultKindName(spec->kind), kind);
  }
}

TEST(Inject, RejectsBadSpecsWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"kil", "did you mean 'kill'"},
      {"explode", "unknown fault"},
      {"kill:every=0", "at least"},
      {"kill:every=-1", "at least"},
      {"kill:p=1.5", "probability"},
      {"kill:at=-2", "0 seconds or more"},
      {"kill:evry=3", "did you mean 'every'"},
      {"kill:every=abc", "not a number"},
      {"kill:every=", "not a number"},
      {"kill:every=nan", "not a number"},
      {"kill:3", "every=SECONDS"},
      {"", "unknown fault"},
  };
  for (const auto& [text, why] : cases) {
    auto spec = ParseInjectSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(spec.status().message().find(why), std::string::npos)
        << text << ": " << spec.status().message();
  }
}

TEST(FaultSchedule, EveryFiresAtMultiples) {
  FaultSchedule schedule({*ParseInjectSpec("kill:every=2")}, 1, {10.0, std::nullopt}, 1);
  EXPECT_TRUE(schedule.Due(1.9, 0).empty());
  EXPECT_EQ(schedule.Due(2.0, 0).size(), 1u);
  EXPECT_TRUE(schedule.Due(3.0, 0).empty());
  EXPECT_EQ(schedule.Due(6.5, 0).size(), 2u);  // 4 and 6, both late
}

TEST(FaultSchedule, AtFiresOnce) {
  FaultSchedule schedule({*ParseInjectSpec("oom:at=3")}, 1, {}, 2);
  EXPECT_TRUE(schedule.Due(2.99, 0).empty());
  const auto due = schedule.Due(3.0, 0);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].kind, FaultKind::kOom);
  EXPECT_TRUE(schedule.Due(100.0, 0).empty());
}

TEST(FaultSchedule, BareKindFallsInTheFirstThreeQuartersAndFollowsTheSeed) {
  std::set<int> moments;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    FaultSchedule schedule({*ParseInjectSpec("kill")}, seed, {100.0, std::nullopt}, 4);
    double when = -1.0;
    for (int tenth = 0; tenth <= 1000; ++tenth) {
      if (!schedule.Due(tenth / 10.0, 0).empty()) {
        when = tenth / 10.0;
        break;
      }
    }
    ASSERT_GE(when, 0.0) << seed;
    EXPECT_LE(when, 75.1) << seed;
    moments.insert(static_cast<int>(when));
    // The same seed gives the same moment.
    FaultSchedule again({*ParseInjectSpec("kill")}, seed, {100.0, std::nullopt}, 4);
    EXPECT_TRUE(again.Due(when - 0.1, 0).empty());
    EXPECT_EQ(again.Due(when, 0).size(), 1u);
  }
  EXPECT_GT(moments.size(), 40u);  // spread over the window, not one moment
}

TEST(FaultSchedule, BareKindInAStepsRunIsPlacedBySteps) {
  FaultSchedule schedule({*ParseInjectSpec("kill")}, 3, {std::nullopt, 400}, 1);
  double fired_at = -1;
  for (int steps = 0; steps <= 400; ++steps) {
    if (!schedule.Due(0.0, steps).empty()) {
      fired_at = steps;
      break;
    }
  }
  EXPECT_GE(fired_at, 1);
  EXPECT_LE(fired_at, 300);
}

TEST(FaultSchedule, ProbabilityPerTenSecondsMatchesItsRate) {
  // p = 0.3 per 10-second interval over 20000 intervals: the count is Binomial(20000, 0.3),
  // mean 6000, sd 64.8; five sd either side.
  FaultSchedule schedule({*ParseInjectSpec("hang:p=0.3")}, 11, {}, 3);
  const auto due = schedule.Due(200000.0, 0);
  EXPECT_GT(due.size(), 6000u - 324u);
  EXPECT_LT(due.size(), 6000u + 324u);
  std::set<int> workers;
  for (const DueFault& f : due) workers.insert(f.worker);
  EXPECT_EQ(workers, (std::set<int>{0, 1, 2}));
  FaultSchedule never({*ParseInjectSpec("hang:p=0")}, 11, {}, 3);
  EXPECT_TRUE(never.Due(1e6, 0).empty());
}

}  // namespace
}  // namespace parity::stress
