// SPDX-License-Identifier: Apache-2.0
#include "core/text_table.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(Table, PadsColumnsAndRightAlignsNumbers) {
  Table table({"name", "count"}, {false, true});
  table.AddRow({"a", "1"});
  table.AddRow({"longer", "12345"});
  EXPECT_EQ(table.Render("  "),
            "  name    count\n"
            "  a           1\n"
            "  longer  12345\n");
}

}  // namespace
}  // namespace parity
