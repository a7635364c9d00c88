// SPDX-License-Identifier: Apache-2.0
// The supervisor's record of one worker: checkpoints kept by digest and chosen to resume
// from, a first start that fails with a usage error, the restart backoff, the summary.
#include "stress/worker_slot.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "stress/checkpoint.h"
#include "testdata.h"

namespace parity::stress {
namespace {

using ::parity::testing::TempDir;

std::string Write(const TempDir& dir, std::int64_t step) {
  const std::string path = dir.path() + "/" + CheckpointFileName(step);
  EXPECT_TRUE(WriteCheckpoint(path, step, "state of step " + std::to_string(step)).ok());
  return path;
}

TEST(WorkerSlot, KeepsTheNewestCheckpointsWithTheirDigests) {
  TempDir dir;
  Slot slot;
  for (std::int64_t step : {10, 20, 30}) {
    EXPECT_EQ(KeepCheckpoint(slot, step, Write(dir, step), 2), "");
  }
  ASSERT_EQ(slot.checkpoints.size(), 2u);
  EXPECT_EQ(slot.checkpoints.front().step, 20);
  EXPECT_EQ(slot.checkpoints.back().digest.size(), 64u);
  EXPECT_NE(KeepCheckpoint(slot, 40, dir.path() + "/missing.ckpt", 2), "");
  EXPECT_EQ(slot.checkpoints.size(), 2u);
}

TEST(WorkerSlot, ResumesFromTheNewestCheckpointWhoseDigestStillMatches) {
  TempDir dir;
  Slot slot;
  for (std::int64_t step : {10, 20, 30}) KeepCheckpoint(slot, step, Write(dir, step), 3);
  std::ofstream(slot.checkpoints.back().path, std::ios::binary | std::ios::app) << "x";
  std::vector<std::string> rejected;
  const CheckpointRef resume = ChooseResume(slot, &rejected);
  EXPECT_EQ(resume.step, 20);
  EXPECT_EQ(resume.path, dir.path() + "/" + CheckpointFileName(20));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0], "checkpoint of step 30 (" + dir.path() + "/" + CheckpointFileName(30) +
                             ") not used: its digest changed since it was written; using step 20");
  EXPECT_EQ(slot.checkpoints.size(), 2u);
}

TEST(WorkerSlot, ACorruptCheckpointDrillResumesNoLaterThanTheCorruptedOne) {
  TempDir dir;
  Slot slot;
  for (std::int64_t step : {10, 20}) KeepCheckpoint(slot, step, Write(dir, step), 3);
  slot.resume_at_most = 10;
  std::ofstream(slot.checkpoints.front().path, std::ios::binary | std::ios::trunc) << "bad";
  std::vector<std::string> rejected;
  const CheckpointRef resume = ChooseResume(slot, &rejected);
  EXPECT_EQ(resume.step, 0);
  EXPECT_EQ(resume.path, "");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].find("checkpoint of step 10"), std::string::npos);
  EXPECT_NE(rejected[0].find("; starting from step 0"), std::string::npos);
  EXPECT_FALSE(slot.resume_at_most);
  EXPECT_TRUE(slot.checkpoints.empty());
}

TEST(WorkerSlot, AFirstProcessEndingWithUsageErrorIsTheRunsError) {
  Slot slot;
  slot.index = 2;
  slot.generation = 1;
  slot.exit_status = 2 << 8;
  slot.last_error = "--param n: must be positive";
  std::optional<Status> error = StartError(slot, "exit 2");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), StatusCode::kInvalidInput);
  EXPECT_NE(error->message().find("worker 2: --param n: must be positive"), std::string::npos);
  slot.exit_status = 3 << 8;
  slot.last_error.clear();
  slot.tail = {"parity: error: no such device"};
  error = StartError(slot, "exit 3");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code(), StatusCode::kUnavailable);
  EXPECT_EQ(error->message(), "worker 2: parity: error: no such device");
  slot.kill_expected = true;  // a fault ended it
  EXPECT_FALSE(StartError(slot, "exit 3"));
  slot.kill_expected = false;
  slot.generation = 2;  // a restart
  EXPECT_FALSE(StartError(slot, "exit 3"));
  slot.generation = 1;
  slot.exit_status = 1 << 8;
  EXPECT_FALSE(StartError(slot, "exit 1"));
}

TEST(WorkerSlot, RestartsBackOffUpToTenSeconds) {
  EXPECT_EQ(RestartDelay(1), 0.0);
  EXPECT_EQ(RestartDelay(2), 0.25);
  EXPECT_EQ(RestartDelay(3), 0.5);
  EXPECT_EQ(RestartDelay(7), 8.0);
  EXPECT_EQ(RestartDelay(8), 10.0);
  EXPECT_EQ(RestartDelay(30), 10.0);
}

TEST(WorkerSlot, CountsWorkAfterEachProcessesFirstStep) {
  Slot slot;
  slot.index = 1;
  slot.device = 1;
  OnProcessStarted(slot, StartedProcess{-1, -1, -1, -1}, 0.0);
  for (std::int64_t step = 1; step <= 3; ++step) {
    StepLine line;
    line.step = step;
    line.work = 10.0;
    OnStep(slot, line, 1.0 + static_cast<double>(step));
  }
  OnProcessEnded(slot);
  EXPECT_EQ(slot.generation, 1);
  EXPECT_EQ(slot.work, 20.0);
  EXPECT_EQ(slot.busy, 2.0);
  const WorkerSummary summary = Summarize(slot, /*interrupted=*/true);
  EXPECT_EQ(summary.index, 1);
  EXPECT_EQ(summary.steps, 3);
  EXPECT_EQ(summary.state, "stopped");
  for (int i = 0; i < 25; ++i) KeepTail(slot, std::string(500, 'x'));
  EXPECT_EQ(slot.tail.size(), 20u);
  EXPECT_EQ(slot.tail.back().size(), 400u);
}

}  // namespace
}  // namespace parity::stress
