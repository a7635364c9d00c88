// SPDX-License-Identifier: Apache-2.0
// A stress worker as a child process: its command line, its start through the process
// helper with pipes (a real /bin/sh child), and the line protocol: whole, cut and malformed
// lines, step lines' fields, control messages.
#include "stress/worker_process.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace parity::stress {
namespace {

using Lines = std::vector<std::string>;

/// Every line of `fd` (non-blocking) until its end; fails the test if it stalls for a minute.
Lines ReadToEnd(int fd) {
  LineReader reader;
  Lines lines;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 60000) != 1) {
      ADD_FAILURE() << "no end of output";
      return lines;
    }
    if ((p.revents & POLLIN) == 0) return lines;  // POLLHUP alone: the writer is gone
    reader.Read(
        fd, true, [&](const std::string& line) { lines.push_back(line); },
        [] { ADD_FAILURE() << "overflow"; });
  }
}

int Reap(int pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return status;
}

Lines Feed(LineReader& reader, std::string_view bytes, int* overflows = nullptr) {
  Lines lines;
  reader.Feed(
      bytes, [&](const std::string& line) { lines.push_back(line); },
      [&] {
        if (overflows != nullptr) ++*overflows;
      });
  return lines;
}

TEST(LineReader, GivesWholeLinesAndKeepsACutOneForLater) {
  LineReader reader;
  EXPECT_EQ(Feed(reader, "{\"step\":1}\n{\"st"), Lines{"{\"step\":1}"});
  EXPECT_EQ(Feed(reader, "ep\":2}\n\nlast"), (Lines{"{\"step\":2}", ""}));
  reader.Clear();
  EXPECT_EQ(Feed(reader, "next\n"), Lines{"next"});
}

TEST(LineReader, DropsALinePastOneMebibyte) {
  LineReader reader;
  int overflows = 0;
  EXPECT_TRUE(Feed(reader, std::string((1 << 20) + 1, 'x'), &overflows).empty());
  EXPECT_EQ(overflows, 1);
  // What follows of the dropped line comes as a line of its own.
  EXPECT_EQ(Feed(reader, "tail\nok\n", &overflows), (Lines{"tail", "ok"}));
  EXPECT_EQ(overflows, 1);
}

TEST(ParseWorkerLine, TellsEventsStepsAndOutputApart) {
  EXPECT_EQ(ParseWorkerLine(R"({"event":"sdc","step":3})", true).kind, LineKind::kEvent);
  // `exec` commands send no events: an event-looking line with a step is a step.
  EXPECT_EQ(ParseWorkerLine(R"({"event":"sdc","step":3})", false).kind, LineKind::kStep);
  EXPECT_EQ(ParseWorkerLine(R"({"event":"sdc"})", false).kind, LineKind::kOutput);
  const WorkerLine step = ParseWorkerLine(R"({"step":7,"loss":0.5})", true);
  ASSERT_EQ(step.kind, LineKind::kStep);
  EXPECT_EQ(step.json["step"], 7);
  for (const char* line : {R"({"step":7)", R"({"step":"7"})", R"({"step":7.5})", "[1,2]", "step 7",
                           "", R"({"event":3})"}) {
    EXPECT_EQ(ParseWorkerLine(line, true).kind, LineKind::kOutput) << line;
  }
}

TEST(ParseStepLine, ReadsFieldsWithDefaults) {
  const StepLine bare = ParseStepLine(Json{{"step", 4}});
  EXPECT_EQ(bare.step, 4);
  EXPECT_FALSE(bare.loss);
  EXPECT_EQ(bare.work, 1.0);
  EXPECT_EQ(bare.sdc_unlisted, 0);
  EXPECT_FALSE(bare.checkpoint);
  EXPECT_FALSE(bare.checkpoint_error);

  const StepLine full = ParseStepLine(Json{{"step", 9},
                                           {"loss", 0.25},
                                           {"work", 1e9},
                                           {"sdc_unlisted", -5},
                                           {"nondeterministic", 2},
                                           {"checkpoint", "/c/step-9.ckpt"},
                                           {"checkpoint_error", 17}});
  EXPECT_EQ(full.loss, 0.25);
  EXPECT_EQ(full.work, 1e9);
  EXPECT_EQ(full.sdc_unlisted, 0);
  EXPECT_EQ(full.nondeterministic, 2);
  EXPECT_EQ(full.checkpoint, "/c/step-9.ckpt");
  EXPECT_EQ(full.checkpoint_error, "(no message)");
  // Fields of the wrong type count as absent.
  const StepLine odd = ParseStepLine(Json{{"step", 1}, {"loss", "low"}, {"checkpoint", 3}});
  EXPECT_FALSE(odd.loss);
  EXPECT_FALSE(odd.checkpoint);
}

TEST(ControlMessages, AreOneJsonLineEach) {
  EXPECT_EQ(PlantMessage(42), "{\"plant\":\"sdc\",\"seed\":42}\n");
  EXPECT_EQ(OomMessage(1024), "{\"oom\":{\"limit_bytes\":1024}}\n");
  EXPECT_EQ(OomEventMessage(2, Json{{"survived", true}, {"allocated_bytes", 10}}),
            "worker 2 allocated 10 bytes past its limit without failing");
  EXPECT_EQ(OomEventMessage(2, Json{{"allocated_bytes", 10}}),
            "worker 2 ran out of memory after 10 more bytes");
}

TEST(DescribeExit, NamesExitsAndSignals) {
  EXPECT_EQ(DescribeExit(3 << 8), "exit 3");
  EXPECT_EQ(DescribeExit(9), "signal 9 (Killed)");
}

TEST(WorkerArgv, BuiltinWorkersRunParityStressWorker) {
  StressOptions options;
  options.workload = "gemm-burn";
  options.parity_exe = "/bin/parity";
  options.worker_threads = 2;
  WorkerLaunch launch{1, 0, "/ck/worker-1", Json{{"n", 64}}, "/ck/worker-1/a.ckpt", 50, 100};
  Result<std::vector<std::string>> argv = WorkerArgv(options, launch);
  ASSERT_TRUE(argv.ok());
  const std::vector<std::string> expected = {"/bin/parity",
                                             "stress",
                                             "--worker",
                                             "--workload",
                                             "gemm-burn",
                                             "--backend",
                                             "cpu",
                                             "--device",
                                             "0",
                                             "--params",
                                             "{\"n\":64}",
                                             "--checkpoint-dir",
                                             "/ck/worker-1",
                                             "--checkpoint-every",
                                             "50",
                                             "--keep-checkpoints",
                                             "3",
                                             "--steps",
                                             "100",
                                             "--resume",
                                             "/ck/worker-1/a.ckpt",
                                             "--threads",
                                             "2"};
  EXPECT_EQ(*argv, expected);
}

TEST(WorkerArgv, ExecCommandsGetTheirPlaceholdersFilled) {
  StressOptions options;
  options.workload = "exec";
  options.command = {"train", "--resume={checkpoint}", "--rank={worker}", "--lr={lr}"};
  WorkerLaunch launch{3, 1, "/ck/worker-3", Json{{"lr", 0.5}}, "", 0, 0};
  Result<std::vector<std::string>> argv = WorkerArgv(options, launch);
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_EQ(*argv, (std::vector<std::string>{"train", "--resume=", "--rank=3", "--lr=0.5"}));
  options.command = {"train", "{nope}"};
  EXPECT_EQ(WorkerArgv(options, launch).status().code(), StatusCode::kInvalidInput);
}

TEST(StartWorkerProcess, ConnectsARealChildThroughPipes) {
  ASSERT_EQ(::setenv("PARITY_STRESS_STRAY", "inherited", 1), 0);
  const WorkerLaunch launch{5, 2, "/ck/worker-5", Json::object(), "", 0, 0};
  Result<StartedProcess> child = StartWorkerProcess(
      {"/bin/sh", "-c",
       "echo \"$PARITY_STRESS_WORKER $PARITY_STRESS_DEVICE $PARITY_STRESS_CHECKPOINT_DIR "
       "${PARITY_STRESS_STRAY-unset}\"; echo oops >&2; read line; printf '{\"step\":1}\\n"
       "{\"step\":2}\\ngot %s\\ncut' \"$line\"; exit 4"},
      launch, /*control=*/true);
  ::unsetenv("PARITY_STRESS_STRAY");
  ASSERT_TRUE(child.ok()) << child.status().message();
  ASSERT_GE(child->stdin_fd, 0);
  SendControl(child->stdin_fd, PlantMessage(7));
  ::close(child->stdin_fd);
  const Lines out = ReadToEnd(child->stdout_fd);
  const Lines err = ReadToEnd(child->stderr_fd);
  const int status = Reap(child->pid);
  ::close(child->stdout_fd);
  ::close(child->stderr_fd);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "5 2 /ck/worker-5 unset");
  EXPECT_EQ(ParseWorkerLine(out[1], true).kind, LineKind::kStep);
  EXPECT_EQ(ParseStepLine(ParseWorkerLine(out[2], true).json).step, 2);
  EXPECT_EQ(out[3], "got {\"plant\":\"sdc\",\"seed\":7}");  // "cut" never ended: no line
  EXPECT_EQ(err, Lines{"oops"});
  EXPECT_EQ(DescribeExit(status), "exit 4");
}

TEST(StartWorkerProcess, AnExecWorkerReadsNothingOnStdin) {
  const WorkerLaunch launch{0, 0, "/tmp", Json::object(), "", 0, 0};
  Result<StartedProcess> child =
      StartWorkerProcess({"/bin/sh", "-c", "cat; echo done"}, launch, /*control=*/false);
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->stdin_fd, -1);
  EXPECT_EQ(ReadToEnd(child->stdout_fd), Lines{"done"});
  EXPECT_EQ(DescribeExit(Reap(child->pid)), "exit 0");
  ::close(child->stdout_fd);
  ::close(child->stderr_fd);
}

TEST(StartWorkerProcess, ACommandThatCannotRunSaysSoAndExits127) {
  const WorkerLaunch launch{0, 0, "/tmp", Json::object(), "", 0, 0};
  for (const std::string command : {"/nonexistent/train", "parity-no-such-command"}) {
    Result<StartedProcess> child = StartWorkerProcess({command}, launch, false);
    ASSERT_TRUE(child.ok()) << command;
    EXPECT_TRUE(ReadToEnd(child->stdout_fd).empty());
    EXPECT_EQ(ReadToEnd(child->stderr_fd),
              Lines{"parity: error: cannot run " + command + ": No such file or directory"});
    EXPECT_EQ(DescribeExit(Reap(child->pid)), "exit 127");
    ::close(child->stdout_fd);
    ::close(child->stderr_fd);
  }
}

}  // namespace
}  // namespace parity::stress
