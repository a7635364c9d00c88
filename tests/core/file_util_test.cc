// SPDX-License-Identifier: Apache-2.0
// WriteFileAtomically and WriteTextFile: regular files replaced whole, and what is not a
// regular file written in place, never replaced (a rename over /dev/null made it a regular file
// that every later `> /dev/null` filled).
#include "core/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace parity {
namespace {

namespace fs = std::filesystem;

class WriteFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/parity-file-util-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
};

TEST_F(WriteFile, ReplacesARegularFileAndLeavesNoTemporary) {
  const std::string path = dir_ + "/out.json";
  std::ofstream(path) << "old contents, longer than the new";
  ASSERT_TRUE(WriteTextFile(path, "new").ok());
  EXPECT_EQ(Read(path), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(WriteFile, ThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  const std::string target = dir_ + "/target.json";
  const std::string link = dir_ + "/link.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteTextFile(link, "new").ok());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Read(target), "new");
}

TEST_F(WriteFile, AFifoIsWrittenInPlace) {
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = Read(fifo); });
  const Status status = WriteTextFile(fifo, "through the pipe");
  reader.join();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(received, "through the pipe");
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(WriteFile, DevNullStaysADevice) {
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  ASSERT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is not a character device on this machine";
  ASSERT_TRUE(WriteTextFile("/dev/null", "discarded").ok());
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(Read("/dev/null"), "");
}

TEST_F(WriteFile, AFileUnderDevShmIsReplacedWhole) {
  // Regular files are replaced wherever they are: written in place, a shorter text would leave
  // the old one's tail behind.
  const std::string path = dir_ + "/again.json";
  ASSERT_TRUE(WriteTextFile(path, "a much longer first text").ok());
  ASSERT_TRUE(WriteTextFile(path, "short").ok());
  EXPECT_EQ(Read(path), "short");
}

TEST_F(WriteFile, ADescriptorNameWritesThroughThatDescriptor) {
  const std::string path = dir_ + "/redirected";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before ", 7), 7);
  const std::string name = "/proc/self/fd/" + std::to_string(fd);
  ASSERT_TRUE(WriteTextFile(name, "then parity").ok());
  ASSERT_TRUE(WriteTextFile("/dev/fd/" + std::to_string(fd), ", appended").ok());
  ::close(fd);
  EXPECT_EQ(Read(path), "before then parity, appended");
}

TEST_F(WriteFile, ADirectoryIsRefusedByName) {
  const Status status = WriteTextFile(dir_, "x");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("Is a directory"), std::string::npos) << status.message();
  EXPECT_TRUE(fs::is_directory(dir_));
}

}  // namespace
}  // namespace parity
