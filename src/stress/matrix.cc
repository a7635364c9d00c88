// SPDX-License-Identifier: Apache-2.0
#include "stress/matrix.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <system_error>
#include <utility>

#include "core/file_util.h"
#include "core/spellcheck.h"
#include "core/text.h"
#include "core/yaml_util.h"

namespace parity::stress {
namespace {

constexpr std::array<std::string_view, 2> kTopKeys = {"seed", "parameters"};
constexpr std::array<std::string_view, 6> kParamKeys = {"choice",      "range",         "scale",
                                                        "every_steps", "every_seconds", "schedule"};
constexpr std::array<std::string_view, 2> kScheduleKeys = {"every_steps", "every_seconds"};
constexpr std::array<std::string_view, 3> kScaleNames = {"uniform", "log", "int"};

// Whole numbers of an int range stay exact in a double up to this magnitude.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
// Epochs are capped here: past it the schedule has no further boundary.
constexpr std::int64_t kMaxEpoch = std::int64_t{1} << 53;

std::string Join(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// " (did you mean 'x'?)" when a candidate is close to `word`, else "".
std::string DidYouMean(std::string_view word, std::span<const std::string_view> candidates) {
  const std::optional<std::string> best = Suggest(word, candidates);
  return best ? " (did you mean '" + *best + "'?)" : "";
}

// What a scalar's text is as a number.
struct Number {
  enum class Kind { kNotANumber, kInteger, kDouble, kOutOfRange };
  Kind kind = Kind::kNotANumber;
  std::int64_t integer = 0;
  double real = 0.0;  // kDouble: may be non-finite (".inf", "nan")
};

Number ReadNumberText(std::string_view text) {
  Number number;
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') {
    text.remove_prefix(1);
  }
  if (text.empty()) return number;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  {
    std::int64_t value = 0;
    const auto [stop, error] = std::from_chars(begin, end, value);
    if (error == std::errc() && stop == end) {
      number.kind = Number::Kind::kInteger;
      number.integer = value;
      return number;
    }
  }
  std::string_view bare = text;
  const bool negative = bare.front() == '-';
  if (negative) bare.remove_prefix(1);
  if (bare == ".inf" || bare == ".Inf" || bare == ".INF") {
    number.kind = Number::Kind::kDouble;
    number.real = negative ? -HUGE_VAL : HUGE_VAL;
    return number;
  }
  if (!negative && (bare == ".nan" || bare == ".NaN" || bare == ".NAN")) {
    number.kind = Number::Kind::kDouble;
    number.real = std::numeric_limits<double>::quiet_NaN();
    return number;
  }
  double value = 0.0;
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (stop != end) return number;
  if (error == std::errc::result_out_of_range) {
    number.kind = Number::Kind::kOutOfRange;
  } else if (error == std::errc()) {
    number.kind = Number::Kind::kDouble;
    number.real = value;
  }
  return number;
}

// "" when `value` may be a parameter's value (a finite number or a string without NUL).
std::string CheckValue(const Json& value, std::string_view what) {
  if (value.is_string()) {
    if (value.get_ref<const std::string&>().find('\0') != std::string::npos) {
      return fmt::format("{} has a NUL byte", what);
    }
    return "";
  }
  if (value.is_number_integer() || value.is_number_unsigned()) return "";
  if (value.is_number_float()) {
    return std::isfinite(value.get<double>()) ? "" : fmt::format("{} is not finite", what);
  }
  return fmt::format("{} is {}, not a number or string", what, value.type_name());
}

// A scalar as a parameter's value, into *out. `what` names it.
Status ReadValue(const YAML::Node& node, std::string_view what, Json* out) {
  if (!node.IsDefined() || node.IsNull()) return YamlAt(node, fmt::format("{} is empty", what));
  if (!node.IsScalar()) {
    return YamlAt(node, fmt::format("{} is {}, not a number or string", what, YamlDescribe(node)));
  }
  const std::string& text = node.Scalar();
  if (text.find('\0') != std::string::npos) {
    return YamlAt(node, fmt::format("{} has a NUL byte", what));
  }
  if (YamlQuoted(node)) {
    *out = text;
    return Status::Ok();
  }
  const Number number = ReadNumberText(text);
  switch (number.kind) {
    case Number::Kind::kInteger:
      *out = number.integer;
      return Status::Ok();
    case Number::Kind::kDouble:
      if (!std::isfinite(number.real)) {
        return YamlAt(node, fmt::format("{} '{}' is not a finite number (quote it for a string)",
                                        what, Printable(text)));
      }
      *out = number.real;
      return Status::Ok();
    case Number::Kind::kOutOfRange:
      return YamlAt(
          node, fmt::format("{} '{}' is out of the range of a double (quote it for a string)", what,
                            Printable(text)));
    case Number::Kind::kNotANumber:
      break;
  }
  *out = text;
  return Status::Ok();
}

// A finite number, unquoted. `what` names it.
Result<double> ReadFiniteNumber(const YAML::Node& node, std::string_view what) {
  if (YamlQuoted(node)) {
    return YamlAt(node, fmt::format("{} is {}, not a number", what, YamlDescribe(node)));
  }
  return YamlNumber(node, what);
}

std::optional<std::uint64_t> ReadUnsigned(const YAML::Node& node) {
  if (!node.IsScalar() || YamlQuoted(node)) return std::nullopt;
  std::string_view text = node.Scalar();
  if (text.size() > 1 && text[0] == '+') text.remove_prefix(1);
  std::uint64_t value = 0;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || stop != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// "" when `name` may name a parameter.
std::string CheckName(std::string_view name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > kMaxParamNameLength) {
    return fmt::format("the name is {} characters long; at most {}", name.size(),
                       kMaxParamNameLength);
  }
  const auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool valid = lower(name[0]);
  for (char c : name.substr(1)) valid = valid && (lower(c) || digit(c));
  if (!valid) {
    return "the name must be lower-case letters, digits and '_', not starting with a digit "
           "([a-z_][a-z0-9_]*), since it is substituted as {name} into commands";
  }
  return "";
}

// The semantic checks, shared by the parser (after reading) and ValidateMatrix.
std::string CheckParam(const ParamSpec& param) {
  if (std::string problem = CheckName(param.name); !problem.empty()) return problem;
  if (param.every_steps < 0) return "'every_steps' must be 1 or more";
  if (!(param.every_seconds >= 0) || !std::isfinite(param.every_seconds)) {
    return "'every_seconds' must be a finite number above 0";
  }
  if (param.every_steps > 0 && param.every_seconds > 0) {
    return "give 'every_steps' or 'every_seconds', not both";
  }
  switch (param.kind) {
    case ParamKind::kConstant:
      if (param.every_steps > 0 || param.every_seconds > 0) {
        return "a constant has no schedule; give 'choice' or 'range' to vary it";
      }
      return CheckValue(param.value, "the value");
    case ParamKind::kChoice: {
      if (param.choices.empty()) return "'choice' is an empty list";
      if (param.choices.size() > kMaxMatrixChoices) {
        return fmt::format("'choice' has {} values; at most {}", param.choices.size(),
                           kMaxMatrixChoices);
      }
      for (std::size_t i = 0; i < param.choices.size(); ++i) {
        std::string problem = CheckValue(param.choices[i], fmt::format("choice #{}", i + 1));
        if (!problem.empty()) return problem;
      }
      return "";
    }
    case ParamKind::kRange:
      if (!std::isfinite(param.lo) || !std::isfinite(param.hi)) {
        return "the bounds of 'range' must be finite";
      }
      if (param.lo > param.hi) {
        return fmt::format("'range' [{}, {}] has lo > hi", param.lo, param.hi);
      }
      if (param.scale == Scale::kLog && param.lo <= 0) {
        return fmt::format("scale log needs lo > 0, and 'range' starts at {}", param.lo);
      }
      if (param.scale == Scale::kInt) {
        for (double bound : {param.lo, param.hi}) {
          if (bound != std::floor(bound)) {
            return fmt::format("scale int needs whole-number bounds, and 'range' has {}", bound);
          }
          if (std::fabs(bound) > kMaxExactInteger) {
            return fmt::format("scale int needs bounds within +-2^53, and 'range' has {}", bound);
          }
        }
      }
      return "";
  }
  return "unknown kind";
}

// every_steps / every_seconds from `fields` (the parameter's own or its schedule's).
Status ReadSchedule(const YamlFields& fields, ParamSpec* param) {
  const YAML::Node* steps = fields.Find("every_steps");
  const YAML::Node* seconds = fields.Find("every_seconds");
  if (steps != nullptr && seconds != nullptr) {
    return YamlAt(fields.node(), "give 'every_steps' or 'every_seconds', not both");
  }
  if (steps != nullptr) {
    const Result<std::int64_t> count = YamlInteger(*steps, "'every_steps'");
    if (YamlQuoted(*steps) || !count.ok() || *count < 1) {
      return YamlAt(*steps,
                    fmt::format("'every_steps' is {}, not a whole number of steps, 1 or more",
                                YamlDescribe(*steps)));
    }
    param->every_steps = *count;
  }
  if (seconds != nullptr) {
    PARITY_ASSIGN_OR_RETURN(const double value, ReadFiniteNumber(*seconds, "'every_seconds'"));
    if (value <= 0) {
      return YamlAt(*seconds,
                    fmt::format("'every_seconds' is {}, not above 0", YamlDescribe(*seconds)));
    }
    param->every_seconds = value;
  }
  return Status::Ok();
}

// Reads a parameter's spec node into *param (whose name is set).
Status ReadParam(const YAML::Node& node, ParamSpec* param) {
  if (!node.IsDefined() || node.IsNull()) {
    return YamlAt(node, "has no value; give a number, a string, 'choice:' or 'range:'");
  }
  if (node.IsSequence()) {
    return YamlAt(node, "is a list; write 'choice: [...]' for a choice of values");
  }
  if (node.IsScalar()) {
    param->kind = ParamKind::kConstant;
    PARITY_RETURN_IF_ERROR(ReadValue(node, "the value", &param->value));
    if (std::string problem = CheckParam(*param); !problem.empty()) return YamlAt(node, problem);
    return Status::Ok();
  }
  if (!node.IsMap()) {
    return YamlAt(node, fmt::format("is {}, not a value or a map", YamlDescribe(node)));
  }
  PARITY_ASSIGN_OR_RETURN(const YamlFields fields,
                          YamlFields::Read(node, "a parameter", kParamKeys));
  const YAML::Node* choice = fields.Find("choice");
  const YAML::Node* range = fields.Find("range");
  const YAML::Node* scale = fields.Find("scale");
  const YAML::Node* schedule = fields.Find("schedule");
  if (choice != nullptr && range != nullptr) {
    return YamlAt(node, "give 'choice' or 'range', not both");
  }
  if (choice == nullptr && range == nullptr) {
    return YamlAt(node,
                  "has neither 'choice' nor 'range' (a constant is a bare value: NAME: VALUE)");
  }
  if (choice != nullptr) {
    if (scale != nullptr) return YamlAt(*scale, "'scale' applies to 'range', not to 'choice'");
    if (choice->IsSequence() && choice->size() > kMaxMatrixChoices) {
      return YamlAt(*choice, fmt::format("'choice' has {} values; at most {}", choice->size(),
                                         kMaxMatrixChoices));
    }
    PARITY_RETURN_IF_ERROR(YamlList(*choice, "'choice'", kMaxMatrixChoices).status());
    param->kind = ParamKind::kChoice;
    std::size_t number = 0;
    for (const YAML::Node& item : *choice) {
      ++number;
      Json value;
      PARITY_RETURN_IF_ERROR(ReadValue(item, fmt::format("choice #{}", number), &value));
      param->choices.push_back(std::move(value));
    }
  } else {
    if (!range->IsSequence() || range->size() != 2) {
      return YamlAt(*range,
                    fmt::format("'range' is {}, not two numbers [lo, hi]", YamlDescribe(*range)));
    }
    param->kind = ParamKind::kRange;
    PARITY_ASSIGN_OR_RETURN(param->lo, ReadFiniteNumber((*range)[0], "lo of 'range'"));
    PARITY_ASSIGN_OR_RETURN(param->hi, ReadFiniteNumber((*range)[1], "hi of 'range'"));
    if (scale != nullptr) {
      const std::string text = scale->IsScalar() ? scale->Scalar() : "";
      const auto it = std::find(kScaleNames.begin(), kScaleNames.end(), text);
      if (it == kScaleNames.end()) {
        return YamlAt(*scale, fmt::format("'scale' is {}, not one of {}{}", YamlDescribe(*scale),
                                          Join(kScaleNames), DidYouMean(text, kScaleNames)));
      }
      param->scale = static_cast<Scale>(it - kScaleNames.begin());
    }
  }
  if (schedule != nullptr) {
    if (fields.Find("every_steps") != nullptr || fields.Find("every_seconds") != nullptr) {
      return YamlAt(*schedule, "give 'schedule' or a flat 'every_steps'/'every_seconds', not both");
    }
    if (!schedule->IsMap()) {
      return YamlAt(*schedule,
                    fmt::format("'schedule' is {}, not a map such as {{every_steps: N}} or "
                                "{{every_seconds: S}}",
                                YamlDescribe(*schedule)));
    }
    PARITY_ASSIGN_OR_RETURN(const YamlFields inner,
                            YamlFields::Read(*schedule, "'schedule'", kScheduleKeys));
    if (inner.size() == 0) {
      return YamlAt(*schedule, "'schedule' is empty; give every_steps or every_seconds");
    }
    PARITY_RETURN_IF_ERROR(ReadSchedule(inner, param));
  } else {
    PARITY_RETURN_IF_ERROR(ReadSchedule(fields, param));
  }
  if (std::string problem = CheckParam(*param); !problem.empty()) return YamlAt(node, problem);
  return Status::Ok();
}

std::string Who(std::string_view name) { return fmt::format("parameter '{}'", Printable(name)); }

// The matrix in the document `root`; "line N: problem" (the caller names the file).
Result<Matrix> ReadMatrix(const YAML::Node& root) {
  if (!root.IsMap()) {
    return YamlAt(root, fmt::format("the file is {}, not a map of 'seed' and 'parameters'",
                                    YamlDescribe(root)));
  }
  PARITY_ASSIGN_OR_RETURN(const YamlFields fields,
                          YamlFields::Read(root, "a matrix file", kTopKeys));
  Matrix matrix;
  if (const YAML::Node* seed = fields.Find("seed"); seed != nullptr) {
    const std::optional<std::uint64_t> value = ReadUnsigned(*seed);
    if (!value) {
      return YamlAt(*seed, fmt::format("'seed' is {}, not a whole number from 0 to 2^64 - 1",
                                       YamlDescribe(*seed)));
    }
    matrix.seed = *value;
  }
  const YAML::Node* params = fields.Find("parameters");
  if (params == nullptr) return YamlAt(root, "has no 'parameters:'");
  if (params->IsNull()) {
    return YamlAt(*params, "'parameters' is empty; write 'parameters: {}' for none");
  }
  if (!params->IsMap()) {
    return YamlAt(*params, fmt::format("'parameters' is {}, not a map of parameter name to spec",
                                       YamlDescribe(*params)));
  }
  if (params->size() > kMaxMatrixParams) {
    return YamlAt(*params, fmt::format("{} parameters; a matrix has at most {}", params->size(),
                                       kMaxMatrixParams));
  }
  std::size_t number = 0;
  for (const auto& entry : *params) {
    ++number;
    if (!entry.first.IsScalar()) {
      return YamlAt(entry.first, fmt::format("parameter #{}: the name is not a string", number));
    }
    ParamSpec param;
    param.name = entry.first.Scalar();
    if (std::string problem = CheckName(param.name); !problem.empty()) {
      return YamlAt(entry.first, Who(param.name) + ": " + problem);
    }
    if (matrix.Find(param.name) != nullptr) {
      return YamlAt(entry.first, Who(param.name) + ": given twice");
    }
    if (Status status = ReadParam(entry.second, &param); !status.ok()) {
      // An empty spec has no place of its own: name the parameter's line.
      if (entry.second.IsNull()) status = YamlAt(entry.first, YamlProblem(status));
      return YamlInContext(status, Who(param.name));
    }
    matrix.params.push_back(std::move(param));
  }
  return matrix;
}

// Same kind of JSON value (integers signed or not alike) and equal.
bool SameValue(const Json& a, const Json& b) {
  const auto category = [](const Json& j) {
    if (j.is_number_integer() || j.is_number_unsigned()) return 1;
    if (j.is_number_float()) return 2;
    if (j.is_string()) return 3;
    return 4 + static_cast<int>(j.type());
  };
  return category(a) == category(b) && a == b;
}

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

std::uint64_t SplitMix64(std::uint64_t x) {
  std::uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a, 64 bits.
std::uint64_t HashName(std::string_view name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// A uniform double in [0, 1): the top 53 bits.
double Unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

std::int64_t StepEpoch(std::int64_t every, std::int64_t step) {
  return step <= 0 ? 0 : step / every;
}

std::int64_t TimeEpoch(double every, double seconds) {
  if (!(seconds > 0)) return 0;  // NaN too
  const double epoch = std::floor(seconds / every);
  return epoch >= static_cast<double>(kMaxEpoch) ? kMaxEpoch : static_cast<std::int64_t>(epoch);
}

std::int64_t EpochOf(const ParamSpec& param, std::int64_t step, double seconds) {
  if (param.kind == ParamKind::kConstant) return 0;
  if (param.every_steps > 0) return StepEpoch(param.every_steps, step);
  if (param.every_seconds > 0) return TimeEpoch(param.every_seconds, seconds);
  return 0;
}

}  // namespace

std::string_view ScaleName(Scale scale) {
  const auto index = static_cast<std::size_t>(scale);
  return index < kScaleNames.size() ? kScaleNames[index] : "?";
}

bool operator==(const ParamSpec& a, const ParamSpec& b) {
  if (a.name != b.name || a.kind != b.kind || a.every_steps != b.every_steps ||
      a.every_seconds != b.every_seconds) {
    return false;
  }
  switch (a.kind) {
    case ParamKind::kConstant:
      return SameValue(a.value, b.value);
    case ParamKind::kChoice:
      return std::equal(a.choices.begin(), a.choices.end(), b.choices.begin(), b.choices.end(),
                        SameValue);
    case ParamKind::kRange:
      return a.lo == b.lo && a.hi == b.hi && a.scale == b.scale;
  }
  return false;
}

bool operator==(const Matrix& a, const Matrix& b) {
  return a.seed == b.seed && a.params == b.params;
}

const ParamSpec* Matrix::Find(std::string_view name) const {
  for (const ParamSpec& param : params) {
    if (param.name == name) return &param;
  }
  return nullptr;
}

Result<Matrix> ParseMatrix(std::string_view yaml_text, std::string_view path) {
  if (yaml_text.size() > kMaxMatrixFileBytes) {
    return Status::Invalid(
        path, fmt::format("{} bytes, larger than a matrix file may be (1 MiB)", yaml_text.size()));
  }
  try {
    PARITY_ASSIGN_OR_RETURN(const YAML::Node root, LoadYaml(yaml_text, std::string(path)));
    if (!root.IsDefined() || root.IsNull()) {
      return Status::Invalid(path, "empty; expected a map with 'parameters:'");
    }
    Result<Matrix> matrix = ReadMatrix(root);
    if (!matrix.ok()) return Status::Invalid(path, matrix.status().message());
    return matrix;
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path, "cannot read the matrix: " + e.msg);
  } catch (const std::exception& e) {
    return Status::Invalid(path, std::string("cannot read the matrix: ") + e.what());
  }
}

Result<Matrix> LoadMatrix(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          ReadSmallFile(path, kMaxMatrixFileBytes, "matrix file"));
  return ParseMatrix(text, path);
}

Result<ParamSpec> ParseParam(std::string_view name, std::string_view yaml_text,
                             std::string_view origin) {
  try {
    ParamSpec param;
    param.name = std::string(name);
    if (std::string problem = CheckName(name); !problem.empty()) {
      return Status::Invalid(origin, Who(name) + ": " + problem);
    }
    // A command-line value has no lines worth naming.
    Result<YAML::Node> root = LoadYaml(yaml_text, "");
    if (!root.ok()) return Status::Invalid(origin, Who(name) + ": " + YamlProblem(root.status()));
    if (Status status = ReadParam(*root, &param); !status.ok()) {
      return Status::Invalid(origin, Who(name) + ": " + YamlProblem(status));
    }
    return param;
  } catch (const std::exception& e) {
    return Status::Invalid(origin, Who(name) + ": cannot read the spec: " + e.what());
  }
}

ParamSpec ConstantParam(std::string name, Json value) {
  ParamSpec param;
  param.name = std::move(name);
  param.kind = ParamKind::kConstant;
  param.value = std::move(value);
  return param;
}

Json ScalarValue(std::string_view text) {
  const Number number = ReadNumberText(text);
  if (number.kind == Number::Kind::kInteger) return number.integer;
  if (number.kind == Number::Kind::kDouble && std::isfinite(number.real)) return number.real;
  return std::string(text);
}

Status ValidateMatrix(const Matrix& matrix, std::string_view origin) {
  if (matrix.params.size() > kMaxMatrixParams) {
    return Status::Invalid(origin, fmt::format("{} parameters; a matrix has at most {}",
                                               matrix.params.size(), kMaxMatrixParams));
  }
  for (std::size_t i = 0; i < matrix.params.size(); ++i) {
    const ParamSpec& param = matrix.params[i];
    if (std::string problem = CheckParam(param); !problem.empty()) {
      return Status::Invalid(origin, Who(param.name) + ": " + problem);
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (matrix.params[j].name == param.name) {
        return Status::Invalid(origin, Who(param.name) + ": given twice");
      }
    }
  }
  return Status::Ok();
}

void SetParam(Matrix* matrix, ParamSpec param) {
  for (ParamSpec& existing : matrix->params) {
    if (existing.name == param.name) {
      existing = std::move(param);
      return;
    }
  }
  matrix->params.push_back(std::move(param));
}

Json MatrixToJson(const Matrix& matrix) {
  Json params = Json::object();
  for (const ParamSpec& param : matrix.params) {
    Json spec;
    switch (param.kind) {
      case ParamKind::kConstant:
        spec = param.value;
        break;
      case ParamKind::kChoice:
        spec = Json::object();
        spec["choice"] = Json(param.choices);
        break;
      case ParamKind::kRange:
        spec = Json::object();
        if (param.scale == Scale::kInt) {
          spec["range"] = {static_cast<std::int64_t>(param.lo),
                           static_cast<std::int64_t>(param.hi)};
        } else {
          spec["range"] = {param.lo, param.hi};
        }
        spec["scale"] = ScaleName(param.scale);
        break;
    }
    if (param.kind != ParamKind::kConstant) {
      if (param.every_steps > 0) spec["every_steps"] = param.every_steps;
      if (param.every_seconds > 0) spec["every_seconds"] = param.every_seconds;
    }
    params[param.name] = std::move(spec);
  }
  Json out = Json::object();
  out["seed"] = matrix.seed;
  out["parameters"] = std::move(params);
  return out;
}

MatrixSampler::MatrixSampler(const Matrix& matrix, std::uint64_t seed)
    : matrix_(matrix), seed_(seed) {
  name_hashes_.reserve(matrix_.params.size());
  for (const ParamSpec& param : matrix_.params) name_hashes_.push_back(HashName(param.name));
}

Json MatrixSampler::Draw(const ParamSpec& param, std::size_t index, int worker,
                         std::int64_t epoch) const {
  if (param.kind == ParamKind::kConstant) return param.value;
  std::uint64_t key = SplitMix64(seed_);
  key = SplitMix64(key ^ name_hashes_[index]);
  key = SplitMix64(key ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(worker)));
  key = SplitMix64(key ^ static_cast<std::uint64_t>(epoch));
  const double u = Unit(key);
  if (param.kind == ParamKind::kChoice) {
    if (param.choices.empty()) return nullptr;
    const std::size_t n = param.choices.size();
    const auto pick = std::min(static_cast<std::size_t>(u * static_cast<double>(n)), n - 1);
    return param.choices[pick];
  }
  const double lo = param.lo;
  const double hi = param.hi;
  double value = lo;
  switch (param.scale) {
    case Scale::kUniform: {
      const double width = hi - lo;
      value = std::isfinite(width) ? lo + u * width : lo * (1 - u) + hi * u;
      break;
    }
    case Scale::kLog: {
      const double log_lo = std::log(lo);
      value = std::exp(u * (std::log(hi) - log_lo) + log_lo);
      break;
    }
    case Scale::kInt: {
      value = std::min(lo + std::floor(u * (hi - lo + 1)), hi);
      // A validated range is within +-2^53; a hand-built one past int64 stays a double.
      if (!(std::fabs(value) <= kMaxExactInteger)) return value >= lo ? value : lo;
      return static_cast<std::int64_t>(value);
    }
  }
  if (!(value >= lo)) value = lo;  // NaN from a hand-built range too
  if (value > hi) value = hi;
  return value;
}

Json MatrixSampler::ValuesAt(int worker, std::int64_t step, double seconds) const {
  Json values = Json::object();
  for (std::size_t i = 0; i < matrix_.params.size(); ++i) {
    const ParamSpec& param = matrix_.params[i];
    values[param.name] = Draw(param, i, worker, EpochOf(param, step, seconds));
  }
  return values;
}

std::vector<std::int64_t> MatrixSampler::EpochsAt(std::int64_t step, double seconds) const {
  std::vector<std::int64_t> epochs;
  epochs.reserve(matrix_.params.size());
  for (const ParamSpec& param : matrix_.params) epochs.push_back(EpochOf(param, step, seconds));
  return epochs;
}

bool MatrixSampler::CrossesEpoch(std::int64_t step0, double seconds0, std::int64_t step1,
                                 double seconds1) const {
  for (const ParamSpec& param : matrix_.params) {
    if (EpochOf(param, step0, seconds0) != EpochOf(param, step1, seconds1)) return true;
  }
  return false;
}

bool MatrixSampler::Changes(int worker, std::int64_t step0, double seconds0, std::int64_t step1,
                            double seconds1) const {
  for (std::size_t i = 0; i < matrix_.params.size(); ++i) {
    const ParamSpec& param = matrix_.params[i];
    const std::int64_t epoch0 = EpochOf(param, step0, seconds0);
    const std::int64_t epoch1 = EpochOf(param, step1, seconds1);
    if (epoch0 == epoch1) continue;
    if (!SameValue(Draw(param, i, worker, epoch0), Draw(param, i, worker, epoch1))) return true;
  }
  return false;
}

std::optional<double> MatrixSampler::NextTimeBoundary(double seconds) const {
  const double from = std::isnan(seconds) ? 0.0 : seconds;
  std::optional<double> best;
  for (const ParamSpec& param : matrix_.params) {
    if (param.kind == ParamKind::kConstant || param.every_steps > 0 || !(param.every_seconds > 0)) {
      continue;
    }
    const double every = param.every_seconds;
    const std::int64_t epoch = TimeEpoch(every, from);
    if (epoch + 1 >= kMaxEpoch) continue;
    // The boundary (epoch + 1) * every, nudged up until the epoch arithmetic agrees that it is
    // in the next epoch, and the delay nudged until from + delay lands there too.
    double at = static_cast<double>(epoch + 1) * every;
    for (int i = 0; i < 64 && TimeEpoch(every, at) <= epoch; ++i) {
      at = std::nextafter(at, HUGE_VAL);
    }
    double delay = at - from;
    for (int i = 0; i < 64 && TimeEpoch(every, from + delay) <= epoch; ++i) {
      delay = std::nextafter(delay, HUGE_VAL);
    }
    if (!(delay > 0) || !std::isfinite(delay) || TimeEpoch(every, from + delay) <= epoch) {
      continue;
    }
    if (!best || delay < *best) best = delay;
  }
  return best;
}

std::optional<std::int64_t> MatrixSampler::NextStepBoundary(std::int64_t step) const {
  const std::int64_t from = std::max<std::int64_t>(step, 0);
  std::optional<std::int64_t> best;
  for (const ParamSpec& param : matrix_.params) {
    if (param.kind == ParamKind::kConstant || param.every_steps <= 0) continue;
    const std::int64_t every = param.every_steps;
    const std::int64_t epoch = from / every;
    if (epoch >= std::numeric_limits<std::int64_t>::max() / every) continue;  // past int64
    const std::int64_t at = (epoch + 1) * every;
    if (!best || at < *best) best = at;
  }
  return best;
}

}  // namespace parity::stress
