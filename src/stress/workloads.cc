// SPDX-License-Identifier: Apache-2.0
// The table of stress workloads, the JSON of an SDC event, and what the built-in workloads
// share (parameters, state blobs, bit flips).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "core/spellcheck.h"
#include "stress/workload.h"
#include "stress/workload_builtin.h"

namespace parity::stress {
namespace {

constexpr WorkloadInfo kWorkloads[] = {
    {"gemm-burn",
     "C = A·B on the device again and again, every entry checked against the first product and "
     "sampled entries against float64 (gpu-burn, DCGM diag)",
     &MakeGemmBurn, "n=1024 (GPUs 4096), dtype=float32, math=native, seed=1"},
    {"stream-burn",
     "BabelStream's copy, mul, add and triad, every element checked against BabelStream's "
     "expected value after every repetition",
     &MakeStreamBurn, "n=4194304, dtype=float64, seed=1"},
    {"train",
     "a small MLP trained with SGD in float32 on the device's GEMM; reports its loss, which a "
     "rerun from a checkpoint reproduces bit for bit",
     &MakeTrain, "batch_size=64, lr=0.01, inputs=64, hidden=128, outputs=8, seed=1"},
    {"exec", "an external command template (--cmd), one JSON line per step on stdout", nullptr, ""},
};

// "a, b, c" of the candidates.
std::string JoinNames(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// `text` whole as a number of type T; nothing when it is not one or has anything around it.
template <typename T>
std::optional<T> ParseWhole(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

void PutLe(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetLe(std::string_view in, std::size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  }
  return value;
}

constexpr std::string_view kStateMagic = "PARITYSW";
constexpr uint32_t kStateVersion = 1;
// A header is a few hundred bytes; anything near this is not one.
constexpr uint64_t kMaxStateHeader = uint64_t{1} << 20;

}  // namespace

std::span<const WorkloadInfo> Workloads() { return kWorkloads; }

Result<const WorkloadInfo*> FindWorkload(std::string_view name) {
  for (const WorkloadInfo& info : kWorkloads) {
    if (info.name == name) return &info;
  }
  std::vector<std::string_view> names;
  for (const WorkloadInfo& info : kWorkloads) names.push_back(info.name);
  if (std::optional<std::string> guess = Suggest(name, names)) {
    return Status::Invalid("",
                           fmt::format("unknown workload '{}' (did you mean '{}'?)", name, *guess));
  }
  return Status::Invalid(
      "", fmt::format("unknown workload '{}' (the workloads: {})", name, JoinNames(names)));
}

Json SdcEventToJson(const SdcEvent& event) {
  Json j = Json::object();
  j["device"] = event.device;
  j["step"] = event.step;
  j["check"] = event.check;
  j["array"] = event.array;
  j["position"] = event.position;
  SetNumber(j, "expected", event.expected);
  SetNumber(j, "got", event.got);
  SetNumber(j, "bound", event.bound);
  return j;
}

namespace internal {

uint64_t Mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(std::span<const std::byte> bytes, uint64_t hash) {
  for (std::byte b : bytes) {
    hash ^= static_cast<uint64_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Result<ParamReader> ParamReader::Make(std::string_view workload, const Params& params,
                                      std::span<const std::string_view> known) {
  if (params.is_null()) return ParamReader(workload, Json::object());
  if (!params.is_object()) {
    return Status::Invalid("", fmt::format("workload {}: the parameters must be a JSON object, "
                                           "not {}",
                                           workload, params.dump()));
  }
  for (const auto& [name, value] : params.items()) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Status::Invalid(
          "", fmt::format("workload {} takes {}; not '{}'", workload, JoinNames(known), name));
    }
  }
  return ParamReader(workload, params);
}

const Json* ParamReader::Find(std::string_view name) const {
  const auto it = params_.find(name);
  if (it == params_.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<int64_t> ParamReader::Int(std::string_view name, int64_t fallback, int64_t min,
                                 int64_t max) const {
  const Json* value = Find(name);
  if (value == nullptr) return fallback;
  // As a double first when it is one, so that 64.0 and "1e3" are integers too.
  std::optional<int64_t> integer;
  std::optional<double> real;
  if (value->is_number_unsigned()) {
    const uint64_t u = value->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      real = static_cast<double>(u);
    } else {
      integer = static_cast<int64_t>(u);
    }
  } else if (value->is_number_integer()) {
    integer = value->get<int64_t>();
  } else if (value->is_number_float()) {
    real = value->get<double>();
  } else if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    integer = ParseWhole<int64_t>(text);
    if (!integer) real = ParseWhole<double>(text);
  }
  if (!integer && real && std::isfinite(*real) && *real == std::floor(*real)) {
    // Out of int64's range: out of every parameter's range too.
    if (std::abs(*real) >= 0x1p63) {
      return Status::Invalid("", fmt::format("workload {}: {} = {} is out of range ({}..{})",
                                             workload_, name, value->dump(), min, max));
    }
    integer = static_cast<int64_t>(*real);
  }
  if (!integer) {
    return Status::Invalid("", fmt::format("workload {}: {} must be an integer, not {}", workload_,
                                           name, value->dump()));
  }
  if (*integer < min || *integer > max) {
    return Status::Invalid("", fmt::format("workload {}: {} = {} is out of range ({}..{})",
                                           workload_, name, *integer, min, max));
  }
  return *integer;
}

Result<double> ParamReader::Real(std::string_view name, double fallback, double above,
                                 double max) const {
  const Json* value = Find(name);
  if (value == nullptr) return fallback;
  std::optional<double> real;
  if (value->is_number()) {
    real = value->get<double>();
  } else if (value->is_string()) {
    real = ParseWhole<double>(value->get_ref<const std::string&>());
  }
  if (!real || !std::isfinite(*real)) {
    return Status::Invalid("", fmt::format("workload {}: {} must be a finite number, not {}",
                                           workload_, name, value->dump()));
  }
  if (!(*real > above) || *real > max) {
    return Status::Invalid("", fmt::format("workload {}: {} = {} is out of range (> {} and <= {})",
                                           workload_, name, *real, above, max));
  }
  return *real;
}

Result<std::string> ParamReader::Choice(std::string_view name, std::string_view fallback,
                                        std::span<const std::string_view> choices) const {
  const Json* value = Find(name);
  if (value == nullptr) return std::string(fallback);
  if (value->is_string()) {
    const std::string& text = value->get_ref<const std::string&>();
    if (std::find(choices.begin(), choices.end(), text) != choices.end()) return text;
  }
  return Status::Invalid("", fmt::format("workload {}: {} must be one of {}, not {}", workload_,
                                         name, JoinNames(choices), value->dump()));
}

std::string EncodeState(const Json& header, std::string_view payload) {
  const std::string text = header.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out(kStateMagic);
  PutLe(&out, kStateVersion, 4);
  PutLe(&out, text.size(), 4);
  out += text;
  PutLe(&out, payload.size(), 8);
  out += payload;
  const uint64_t sum = Fnv1a(std::as_bytes(std::span(out.data(), out.size())));
  PutLe(&out, sum, 8);
  return out;
}

Result<DecodedState> DecodeState(std::string_view state, std::string_view workload) {
  const auto bad = [&](std::string_view problem) {
    return Status::Invalid("", fmt::format("workload {}: state {}", workload, problem));
  };
  // magic, version, header length, payload length, checksum
  constexpr std::size_t kFixed = 8 + 4 + 4 + 8 + 8;
  if (state.size() < kFixed) {
    return bad(fmt::format("is {} bytes, shorter than any state", state.size()));
  }
  if (state.substr(0, kStateMagic.size()) != kStateMagic) {
    return bad("does not start with \"PARITYSW\" (not a state of a built-in workload)");
  }
  if (const uint64_t version = GetLe(state, 8, 4); version != kStateVersion) {
    return bad(fmt::format("has format version {}, this parity reads {}", version, kStateVersion));
  }
  const uint64_t header_bytes = GetLe(state, 12, 4);
  if (header_bytes > kMaxStateHeader || header_bytes > state.size() - kFixed) {
    return bad(fmt::format("says its header is {} bytes, but it is {} bytes in all", header_bytes,
                           state.size()));
  }
  const std::size_t payload_at = 16 + header_bytes + 8;
  const uint64_t payload_bytes = GetLe(state, 16 + header_bytes, 8);
  if (payload_bytes != state.size() - kFixed - header_bytes) {
    return bad(fmt::format("says its payload is {} bytes, but {} bytes follow the header",
                           payload_bytes, state.size() - payload_at - 8));
  }
  const std::size_t sum_at = state.size() - 8;
  if (Fnv1a(std::as_bytes(std::span(state.data(), sum_at))) != GetLe(state, sum_at, 8)) {
    return bad("fails its checksum (corrupt)");
  }
  DecodedState out;
  out.header = Json::parse(state.substr(16, header_bytes), nullptr, false);
  if (out.header.is_discarded() || !out.header.is_object()) {
    return bad("has a header that is not a JSON object");
  }
  const auto name = out.header.find("workload");
  if (name == out.header.end() || !name->is_string()) return bad("names no workload");
  if (name->get_ref<const std::string&>() != workload) {
    return bad(fmt::format("is of workload '{}'", name->get_ref<const std::string&>()));
  }
  const auto step = out.header.find("step");
  if (step == out.header.end() || !step->is_number_integer() || step->get<int64_t>() < 0 ||
      (step->is_number_unsigned() &&
       step->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
    return bad("has no step count");
  }
  out.step = step->get<int64_t>();
  out.payload = std::string(state.substr(payload_at, payload_bytes));
  return out;
}

std::vector<int> FlipCandidateBits(DType dtype, uint64_t seed) {
  const DTypeInfo& info = Info(dtype);
  const int fraction = info.mantissa_bits;
  const int exponent = info.exponent_bits;
  std::vector<int> bits;
  // The exponent bits but the highest (flipping that one can make a finite value Inf or NaN,
  // which is reported too, but is not the drill's point).
  const int safe = std::max(exponent - 1, 1);
  const int first = static_cast<int>(Mix64(seed) % static_cast<uint64_t>(safe));
  for (int k = 0; k < safe; ++k) bits.push_back(fraction + (first + k) % safe);
  if (exponent > 1) bits.push_back(fraction + exponent - 1);
  for (int k = 1; k <= 3 && k <= fraction; ++k) bits.push_back(fraction - k);
  return bits;
}

void FlipBit(std::byte* element, std::size_t itemsize, int bit) {
  std::size_t byte = static_cast<std::size_t>(bit) / 8;
  if constexpr (std::endian::native == std::endian::big) byte = itemsize - 1 - byte;
  if (byte >= itemsize) return;
  element[byte] ^= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
}

}  // namespace internal
}  // namespace parity::stress
