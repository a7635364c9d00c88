// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: accept's criteria file (YAML). Criteria that parse have thresholds in
// range and a JSON form; every error names the file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "accept/criteria.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_accept_criteria: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto criteria = parity::accept::ParseCriteria(text, "fuzz.yaml");
  if (!criteria.ok()) {
    if (criteria.status().message().rfind("fuzz.yaml: ", 0) != 0) Fail("an error without the file");
    return 0;
  }
  const auto& c = *criteria;
  if (!(c.quality.margin >= 0) || !(c.throughput.min_ratio >= 0) || !(c.numerics.ratio >= 1)) {
    Fail("a threshold out of range");
  }
  if (c.stability.max_sdc_events < 0 || !std::isfinite(c.stability.max_junction_celsius)) {
    Fail("a stability limit out of range");
  }
  if (c.numerics.tolerance.policy == "explicit" &&
      (!c.numerics.tolerance.rtol || !c.numerics.tolerance.atol)) {
    Fail("explicit without both tolerances");
  }
  (void)parity::Dump(parity::accept::CriteriaToJson(c));
  return 0;
}
