// SPDX-License-Identifier: Apache-2.0
// Libraries loaded at run time: dlopen's error, calls resolved from alternatives, and the
// first required call a library lacks named with the library.
#include "core/dynlib.h"

#include <gtest/gtest.h>

#include <cstring>

namespace parity {
namespace {

constexpr const char* kLibc = "libc.so.6";

TEST(OpenLibrary, AMissingLibraryIsUnavailableWithDlerrorsText) {
  Result<void*> library = OpenLibrary("/nonexistent/libparity_none.so");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(library.status().message().find("/nonexistent/libparity_none.so"), std::string::npos)
      << library.status().message();
}

TEST(SymbolResolver, TakesTheFirstAlternativeTheLibraryHas) {
  Result<void*> library = OpenLibrary(kLibc);
  ASSERT_TRUE(library.ok()) << library.status().message();
  SymbolResolver symbols(*library, kLibc);
  std::size_t (*length)(const char*) = nullptr;
  const char* found = symbols.Require({"parity_no_strlen_v2", "strlen"}, &length);
  ASSERT_NE(found, nullptr);
  EXPECT_STREQ(found, "strlen");
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(length("four"), 4u);
  EXPECT_TRUE(symbols.status().ok());
  EXPECT_EQ(symbols.missing(), "");
}

TEST(SymbolResolver, NamesTheFirstRequiredCallMissingAndTheLibrary) {
  Result<void*> library = OpenLibrary(kLibc);
  ASSERT_TRUE(library.ok());
  SymbolResolver symbols(*library, kLibc);
  void (*call)() = &::abort;
  EXPECT_EQ(symbols.Optional({"parity_no_such_call"}, &call), nullptr);
  EXPECT_EQ(call, nullptr);
  EXPECT_TRUE(symbols.status().ok());  // an optional call may be missing
  symbols.Require({"parity_missing_v2", "parity_missing"}, &call);
  symbols.Require({"parity_missing_later"}, &call);
  EXPECT_EQ(symbols.missing(), "parity_missing_v2 and parity_missing");
  EXPECT_EQ(symbols.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(symbols.status().message(), "libc.so.6: lacks parity_missing_v2 and parity_missing");
}

}  // namespace
}  // namespace parity
