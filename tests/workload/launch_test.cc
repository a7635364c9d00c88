// SPDX-License-Identifier: Apache-2.0
#include "workload/launch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace parity::workload {
namespace {

namespace fs = std::filesystem;

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/parity_launch_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An executable file at dir_/name holding `text`.
  std::string Executable(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
    return path;
  }

  std::string dir_;
};

TEST_F(LaunchTest, InterpretersAndPythonScriptsAreCaptured) {
  const std::string python = Executable("python3.11", "");
  auto c = ClassifyCommand({python, "train.py", "-S"});  // -S after the script is the script's
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->program, python);
  EXPECT_FALSE(c->workers_only);
  c = ClassifyCommand({python, "-u", "-W", "ignore", "-m", "torch.distributed.run", "x.py"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->workers_only);
  c = ClassifyCommand({python, "-m", "torch.distributed.launch"});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->workers_only);
  c = ClassifyCommand({python, "-m", "trainer"});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->workers_only);
  const std::string torchrun = Executable("torchrun", "#!/usr/bin/python3\nimport sys\n");
  c = ClassifyCommand({torchrun, "--nproc_per_node", "2", "x.py"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->workers_only);
  const std::string script = Executable("train", "#!/usr/bin/env python3\n");
  c = ClassifyCommand({script});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->workers_only);
}

TEST_F(LaunchTest, OtherCommandsAndFlagsThatKeepTheCaptureOutAreRefused) {
  const std::string shell = Executable("run.sh", "#!/bin/sh\necho hi\n");
  auto c = ClassifyCommand({shell});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("not a Python interpreter or Python script"),
            std::string::npos);
  EXPECT_NE(c.status().message().find("python -m MODULE"), std::string::npos);
  c = ClassifyCommand({dir_ + "/missing"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("command not found"), std::string::npos);
  c = ClassifyCommand({"parity-no-such-command-on-path"});
  EXPECT_FALSE(c.ok());
  const std::string python = Executable("python", "");
  for (const char* flag : {"-I", "-S", "-E", "-uS", "-bIu"}) {
    c = ClassifyCommand({python, flag, "train.py"});
    EXPECT_FALSE(c.ok()) << flag;
  }
  // -W and -X take the next argument, which is not a flag group.
  EXPECT_TRUE(ClassifyCommand({python, "-X", "importtime", "train.py"}).ok());
  EXPECT_TRUE(ClassifyCommand({python, "-W", "ignore::SyntaxWarning", "train.py"}).ok());
  // A flag group ends at -c: "-cS" is the code "S".
  EXPECT_TRUE(ClassifyCommand({python, "-cS"}).ok());
  const std::string not_executable = dir_ + "/plain.py";
  std::ofstream(not_executable) << "#!/usr/bin/python3\n";
  EXPECT_FALSE(ClassifyCommand({not_executable}).ok());
}

TEST_F(LaunchTest, TheDumpRootIsNewOrEmptyAndWritable) {
  EXPECT_TRUE(PrepareDumpRoot(dir_).ok());  // empty
  EXPECT_TRUE(fs::is_empty(dir_));          // the probe is gone
  const std::string fresh = dir_ + "/a/b";
  EXPECT_TRUE(PrepareDumpRoot(fresh).ok());
  EXPECT_TRUE(fs::is_directory(fresh));
  Status s = PrepareDumpRoot(dir_);  // holds a/ now
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not empty"), std::string::npos);
  const std::string file = Executable("file", "x");
  s = PrepareDumpRoot(file);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a directory"), std::string::npos);
  s = PrepareDumpRoot(file + "/sub");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot be created"), std::string::npos);
}

TEST_F(LaunchTest, ExitCodesSignalsAndEnvironmentPassThrough) {
  auto code = RunPassingThrough({"/bin/sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 3);
  code = RunPassingThrough({"/bin/sh", "-c", "kill -TERM $$"}, {});
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + 15);
  const std::string out = dir_ + "/env";
  code = RunPassingThrough({"/bin/sh", "-c", "printf %s \"$PARITY_LAUNCH_TEST\" > " + out},
                           {{"PARITY_LAUNCH_TEST", "x y"}});
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  std::ifstream in(out);
  std::string got;
  std::getline(in, got);
  EXPECT_EQ(got, "x y");
  EXPECT_FALSE(RunPassingThrough({dir_ + "/missing"}, {}).ok());
}

TEST_F(LaunchTest, SignalsSentToParityAloneArePassedOn) {
  const std::string ready = dir_ + "/ready";
  std::thread sender([&] {
    while (!fs::exists(ready)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(::getpid(), SIGINT);  // si_code SI_USER: forwarded
  });
  auto code = RunPassingThrough(
      {"/bin/sh", "-c", "trap 'exit 7' INT; touch " + ready + "; while :; do sleep 0.05; done"},
      {});
  sender.join();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 7);
}

}  // namespace
}  // namespace parity::workload
