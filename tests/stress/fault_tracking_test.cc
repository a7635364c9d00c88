// SPDX-License-Identifier: Apache-2.0
// The faults of a stress run, open until the worker they hit recovers: by a step, by a step
// of a later process, once a disk-full limit is lifted, or (a planted flip) when the worker
// reports it where it was planted; failures nobody injected, and their repeats.
#include "stress/fault_tracking.h"

#include <gtest/gtest.h>

#include <vector>

namespace parity::stress {
namespace {

FaultRecord Injected(const char* kind, int worker, double time) {
  FaultRecord record;
  record.kind = kind;
  record.worker = worker;
  record.time = time;
  record.detail = "fired";
  return record;
}

FiredFault EndsTheProcess() {
  FiredFault fired;
  fired.kill_expected = fired.needs_new_process = true;
  return fired;
}

TEST(FaultBook, AKillIsRecoveredByTheFirstStepOfALaterProcess) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  book.OpenInjected(Injected("kill", 0, 10.0), /*generation=*/1, EndsTheProcess());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(book.HasOpen(0));
  EXPECT_FALSE(book.HasOpen(1));
  book.OnStep(1, 2, 50, false, 11.0);  // another worker
  book.OnStep(0, 1, 50, false, 11.0);  // a line the killed process wrote before it died
  EXPECT_TRUE(book.HasOpen(0));
  book.OnStep(0, 2, 41, false, 12.5);
  EXPECT_FALSE(book.HasOpen(0));
  EXPECT_TRUE(records[0].recovered);
  EXPECT_EQ(records[0].recovery_seconds, 2.5);
}

TEST(FaultBook, DiskFullStaysOpenUntilTheLimitIsLifted) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  FiredFault fired;
  fired.disk_full = true;
  book.OpenInjected(Injected("disk-full", 0, 1.0), 1, fired);
  book.OnStep(0, 1, 5, /*disk_full=*/true, 2.0);
  EXPECT_TRUE(book.HasOpen(0));
  book.OnStep(0, 1, 6, /*disk_full=*/false, 4.0);
  EXPECT_FALSE(book.HasOpen(0));
  EXPECT_EQ(records[0].recovery_seconds, 3.0);
}

TEST(FaultBook, APlantedFlipIsFoundOnlyWhereItWasPlanted) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  FiredFault fired;
  fired.sdc = true;
  fired.plant_seed = 77;
  book.OpenInjected(Injected("sdc", 0, 1.0), 1, fired);
  EXPECT_FALSE(book.HasOpen(0));  // a flip does not hold the worker back
  EXPECT_EQ(book.UnplantedSeeds(0), std::vector<std::uint64_t>{77});
  EXPECT_TRUE(book.UnplantedSeeds(1).empty());
  book.OnPlanted(0, Json{{"step", 8}, {"array", "c"}, {"position", {1, 2}}, {"bit", 30}});
  EXPECT_TRUE(book.UnplantedSeeds(0).empty());
  EXPECT_EQ(records[0].detail, "bit 30 of c[1,2] flipped in step 8");
  book.OnSdcEvent(0, Json{{"step", 8}, {"array", "c"}, {"position", {2, 1}}}, 2.0);
  book.OnSdcEvent(0, Json{{"step", 7}, {"array", "c"}, {"position", {1, 2}}}, 2.0);
  EXPECT_FALSE(records[0].recovered);
  book.OnSdcEvent(0, Json{{"step", 8}, {"array", "c"}, {"position", {1, 2}}}, 2.5);
  EXPECT_TRUE(records[0].recovered);
  EXPECT_EQ(records[0].recovery_seconds, 1.5);
  EXPECT_EQ(records[0].detail, "bit 30 of c[1,2] flipped in step 8; reported at that position");
}

TEST(FaultBook, AFlipPassedUnreportedIsNotRecovered) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  FiredFault fired;
  fired.sdc = true;
  book.OpenInjected(Injected("sdc", 0, 1.0), 1, fired);
  book.OnStep(0, 1, 20, false, 2.0);  // before the flip is planted: nothing to judge
  book.OnPlanted(0, Json{{"step", 21}, {"array", "a"}, {"position", {0}}, {"bit", 1}});
  book.OnStep(0, 1, 21, false, 3.0);
  EXPECT_FALSE(records[0].recovered);
  EXPECT_NE(records[0].detail.find("; the flip planted in step 21 was not reported"),
            std::string::npos);
  book.Finish(false);  // closed already: no end-of-run note
  EXPECT_EQ(records[0].detail.find("end of the run"), std::string::npos);
}

TEST(FaultBook, AFailureAgainBeforeAStepIsCountedOnTheOpenOne) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  book.OpenUnplanned(UnplannedFault(0, 1.0, "worker-crash", "worker 0 ended by itself (exit 1)"), 1,
                     "exit 1");
  book.OpenUnplanned(UnplannedFault(0, 2.0, "worker-crash", "again"), 2, "exit 1");
  book.OpenUnplanned(UnplannedFault(0, 3.0, "worker-crash", "again"), 3, "signal 11");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].injected);
  EXPECT_EQ(records[0].repeats, 2);
  EXPECT_EQ(records[0].detail,
            "worker 0 ended by itself (exit 1) (and 2 more times: last signal 11)");
  // A hang nobody injected is always a fault of its own.
  book.OpenUnplanned(UnplannedFault(0, 4.0, "worker-hang", "no step"), 3, "");
  EXPECT_EQ(records.size(), 2u);
  EXPECT_FALSE(book.HasOpenHang(0));  // only an injected hang counts
  book.OnStep(0, 4, 1, false, 5.0);
  EXPECT_TRUE(records[0].recovered);
  EXPECT_TRUE(records[1].recovered);
}

TEST(FaultBook, FinishNotesWhatIsStillOpen) {
  std::vector<FaultRecord> records;
  FaultBook book(&records);
  book.OpenInjected(Injected("hang", 0, 1.0), 1, EndsTheProcess());
  book.OpenInjected(Injected("kill", 1, 1.0), 1, EndsTheProcess());
  EXPECT_TRUE(book.HasOpenHang(0));
  EXPECT_FALSE(book.HasOpenHang(1));
  book.Finish(true);
  EXPECT_EQ(records[0].detail, "fired; the run was interrupted before it recovered");
  std::vector<FaultRecord> others;
  FaultBook unfinished(&others);
  unfinished.OpenInjected(Injected("kill", 1, 1.0), 1, EndsTheProcess());
  unfinished.Finish(false);
  EXPECT_EQ(others[0].detail, "fired; not recovered by the end of the run");
}

}  // namespace
}  // namespace parity::stress
