// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the stress matrix file (YAML); a valid matrix is sampled at a few points,
// checked to stay within its specs, and written as JSON that must read back equal. The same
// text is also split as an `exec` command template and expanded with the sampled values.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stress/command_template.h"
#include "stress/matrix.h"

namespace {

void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_stress_matrix: %s\n", what);
  std::abort();
}

// Every value ValuesAt gives must be one its spec allows.
void CheckValues(const parity::stress::Matrix& matrix, const parity::Json& values) {
  using parity::stress::ParamKind;
  using parity::stress::Scale;
  if (!values.is_object() || values.size() != matrix.params.size()) Fail("values: wrong shape");
  for (const parity::stress::ParamSpec& param : matrix.params) {
    const auto it = values.find(param.name);
    if (it == values.end()) Fail("values: a parameter is missing");
    const parity::Json& value = *it;
    switch (param.kind) {
      case ParamKind::kConstant:
        if (value != param.value) Fail("values: a constant changed");
        break;
      case ParamKind::kChoice: {
        bool found = false;
        for (const parity::Json& choice : param.choices) found = found || value == choice;
        if (!found) Fail("values: a choice not in the list");
        break;
      }
      case ParamKind::kRange: {
        if (param.scale == Scale::kInt && !value.is_number_integer()) Fail("values: int scale");
        if (param.scale != Scale::kInt && !value.is_number_float()) Fail("values: not a double");
        const double x = value.get<double>();
        if (!(x >= param.lo && x <= param.hi)) Fail("values: out of range");
        break;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parity::Json values = parity::Json::object();
  auto matrix = parity::stress::ParseMatrix(text, "fuzz.yaml");
  if (matrix.ok()) {
    const parity::stress::MatrixSampler sampler(*matrix, matrix->seed);
    const std::int64_t steps[] = {0, 1, 99, 1000, -5, INT64_MAX};
    const double seconds[] = {0.0, 0.5, 61.0, 1e18, -1.0, NAN};
    for (int i = 0; i < 6; ++i) {
      values = sampler.ValuesAt(i % 2, steps[i], seconds[i]);
      CheckValues(*matrix, values);
      (void)sampler.Changes(0, steps[0], seconds[0], steps[i], seconds[i]);
      if (const auto delay = sampler.NextTimeBoundary(seconds[i]); delay && !(*delay > 0)) {
        Fail("NextTimeBoundary: not after now");
      }
      if (const auto next = sampler.NextStepBoundary(steps[i]); next && *next <= steps[i]) {
        Fail("NextStepBoundary: not after now");
      }
    }
    const parity::Json json = parity::stress::MatrixToJson(*matrix);
    bool utf8 = true;  // Dump replaces invalid UTF-8, which then can't read back equal
    try {
      (void)json.dump();
    } catch (const parity::Json::exception&) {
      utf8 = false;
    }
    if (utf8) {
      auto again = parity::stress::ParseMatrix(parity::Dump(json), "fuzz.json");
      if (!again.ok()) Fail(("MatrixToJson does not parse: " + again.status().message()).c_str());
      if (!(*again == *matrix)) Fail("MatrixToJson does not read back equal");
    }
  }
  auto words = parity::SplitCommand(text);
  if (words.ok()) {
    (void)parity::stress::PlaceholderNames(*words);
    auto argv = parity::stress::ExpandCommand(*words, values);
    if (argv.ok() && argv->size() != words->size()) Fail("ExpandCommand: word count changed");
    std::vector<std::string> known;
    for (const auto& item : values.items()) known.push_back(item.key());
    const parity::Status checked = parity::stress::CheckCommand(*words, known);
    // With no null or list values, CheckCommand and ExpandCommand agree.
    if (checked.ok() != argv.ok()) Fail("CheckCommand and ExpandCommand disagree");
  }
  return 0;
}
