// SPDX-License-Identifier: Apache-2.0
// parity serve's refusals: the bearer token, encoded separators, paths that leave a root.
#include "serve/security.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testdata.h"

namespace parity::serve {
namespace {

using ::parity::testing::TempDir;
namespace fs = std::filesystem;

TEST(BearerMatches, OnlyTheExactHeader) {
  EXPECT_TRUE(BearerMatches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer s3cret ", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer S3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("s3cret", "s3cret"));
  EXPECT_FALSE(BearerMatches("", "s3cret"));
  EXPECT_FALSE(BearerMatches("Bearer ", ""));  // no token never matches
  EXPECT_FALSE(BearerMatches("", ""));
}

TEST(HasEncodedSeparator, RefusesEncodedSlashDotBackslashAndNul) {
  for (const char* target :
       {"/files/0/a%2fb", "/files/0/a%2Fb", "/files/0/%2e%2e/x", "/files/0/%2E%2E/x",
        "/files/0/a%5cb", "/files/0/a%00b", "/files/0/x%2f?q=1"}) {
    EXPECT_TRUE(HasEncodedSeparator(target)) << target;
  }
  for (const char* target :
       {"/files/0/a/b", "/api/runs?q=%2f", "/files/0/a%20b", "/", "%2", "/files/0/%"}) {
    EXPECT_FALSE(HasEncodedSeparator(target)) << target;
  }
}

TEST(IsUnder, ComponentBoundaries) {
  EXPECT_TRUE(IsUnder("/srv/root", "/srv/root"));
  EXPECT_TRUE(IsUnder("/srv/root/a/b", "/srv/root"));
  EXPECT_FALSE(IsUnder("/srv/rootkit/a", "/srv/root"));
  EXPECT_FALSE(IsUnder("/srv", "/srv/root"));
  EXPECT_TRUE(IsUnder("/anything", "/"));
}

class ResolveUnderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.File("root");
    fs::create_directories(root_ + "/reports/r1");
    std::ofstream(root_ + "/reports/r1/report.html") << "<html></html>";
    std::ofstream(dir_.File("secret.txt")) << "secret";
    fs::create_symlink(dir_.File("secret.txt"), root_ + "/reports/out-link");
    fs::create_symlink(dir_.path(), root_ + "/reports/out-dir");
    fs::create_symlink("r1/report.html", root_ + "/reports/in-link");
  }
  TempDir dir_;
  std::string root_;
};

TEST_F(ResolveUnderTest, ServesWhatIsInside) {
  auto path = ResolveUnder(root_, "reports/r1/report.html");
  ASSERT_TRUE(path.ok()) << path.status().message();
  EXPECT_EQ(*path, fs::canonical(root_ + "/reports/r1/report.html").string());
  auto link = ResolveUnder(root_, "reports/in-link");  // a link that stays inside
  ASSERT_TRUE(link.ok()) << link.status().message();
  EXPECT_EQ(*link, *path);
}

TEST_F(ResolveUnderTest, RefusesEveryWayOut) {
  for (const char* rel : {"../secret.txt", "reports/../../secret.txt", "reports/./r1/report.html",
                          "/etc/passwd", "reports/out-link", "reports/out-dir/secret.txt",
                          "reports\\r1\\report.html", "reports/missing", ".."}) {
    auto path = ResolveUnder(root_, rel);
    EXPECT_FALSE(path.ok()) << rel << " resolved to " << (path.ok() ? *path : "");
  }
  const std::string with_nul("reports/r1/report.html\0/x", 25);
  EXPECT_FALSE(ResolveUnder(root_, with_nul).ok());
}

TEST_F(ResolveUnderTest, SaysWhenALinkLeadsOut) {
  bool outside = false;
  EXPECT_FALSE(ResolveUnder(root_, "reports/out-link", &outside).ok());
  EXPECT_TRUE(outside);
  outside = false;
  EXPECT_FALSE(ResolveUnder(root_, "reports/missing", &outside).ok());
  EXPECT_FALSE(outside);
}

TEST(HostAllowed, LoopbackNamesWithThePort) {
  const HostPolicy policy = MakeHostPolicy("127.0.0.1", 8470, {}, false);
  for (const char* host :
       {"127.0.0.1:8470", "localhost:8470", "LocalHost:8470", "[::1]:8470", "[::1]:8470"}) {
    EXPECT_TRUE(HostAllowed(host, policy)) << host;
  }
  for (const char* host : {"rebind.attacker.example:8470", "127.0.0.1:8471", "127.0.0.1",
                           "127.0.0.1:", "localhost:8470x", "localhost:+8470", "::1:8470", "[::1]",
                           "", "127.0.0.1:8470 ", "127.0.0.2:8470", "localhost.:8470",
                           "localhost:08470", "localhost:0008470"}) {
    EXPECT_FALSE(HostAllowed(host, policy)) << host;
  }
  // Port 80 may be left out, as browsers do.
  EXPECT_TRUE(HostAllowed("localhost", MakeHostPolicy("127.0.0.1", 80, {}, false)));
}

TEST(HostAllowed, ListenAddressAndAllowedNamesWithAToken) {
  // A specific listen address is a name too; 0.0.0.0 and :: are not.
  EXPECT_TRUE(HostAllowed("10.1.2.3:9000", MakeHostPolicy("10.1.2.3", 9000, {}, true)));
  EXPECT_TRUE(HostAllowed("[fd00::5]:9000", MakeHostPolicy("fd00::5", 9000, {}, true)));
  EXPECT_FALSE(HostAllowed("0.0.0.0:9000", MakeHostPolicy("0.0.0.0", 9000, {}, true)));
  EXPECT_FALSE(HostAllowed("[::]:9000", MakeHostPolicy("::", 9000, {}, true)));
  const HostPolicy with_token = MakeHostPolicy("0.0.0.0", 9000, {"Parity.Example"}, true);
  EXPECT_TRUE(HostAllowed("parity.example:9000", with_token));
  EXPECT_FALSE(HostAllowed("other.example:9000", with_token));
  // Without a token, --allow-host names are never taken.
  EXPECT_FALSE(HostAllowed("parity.example:9000",
                           MakeHostPolicy("127.0.0.1", 9000, {"parity.example"}, false)));
}

TEST(CheckRequestHead, WithinAndOverEachLimit) {
  HeadLimits limits;
  limits.request_line = 64;
  limits.fields = 3;
  limits.head = 200;
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\nHost: a\r\n\r\n", limits), HeadVerdict::kComplete);
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\nHost: a\r\n", limits), HeadVerdict::kIncomplete);
  EXPECT_EQ(CheckRequestHead("", limits), HeadVerdict::kIncomplete);
  // Over a limit as soon as the bytes show it, the blank line not yet sent.
  EXPECT_EQ(CheckRequestHead("GET /" + std::string(70, 'x'), limits), HeadVerdict::kLineTooLong);
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n", limits),
            HeadVerdict::kTooManyFields);
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n", limits),
            HeadVerdict::kComplete);
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\na: " + std::string(250, 'v'), limits),
            HeadVerdict::kHeadTooLarge);
  // Only the first head counts: a pipelined second request is the next one's business.
  EXPECT_EQ(CheckRequestHead("GET / HTTP/1.1\r\n\r\n" + std::string(500, 'x'), limits),
            HeadVerdict::kComplete);
}

}  // namespace
}  // namespace parity::serve
