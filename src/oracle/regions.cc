// SPDX-License-Identifier: Apache-2.0
#include "oracle/regions.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "compare/context.h"
#include "core/file_util.h"

namespace parity {
namespace {

constexpr std::size_t kMaxIndexBytes = std::size_t{64} << 20;
constexpr std::string_view kIndex = "oracle/regions.json";

// The record's entry in its directory's region index, or why there is none (`why`).
Json RegionEntry(const DumpDir& dump, const DumpRecord& record, std::string* why) {
  const std::string path = dump.parts()[record.part].dir + "/" + std::string(kIndex);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    *why = fmt::format(
        "compared only: no float64 replay of its graph in the dump ({} is written by `python "
        "-m parity_dump.regions DUMP`)",
        kIndex);
    return Json();
  }
  auto text = ReadSmallFile(path, kMaxIndexBytes, "the region replay index");
  if (!text.ok()) {
    *why = fmt::format("compared only: {} unreadable: {}", kIndex, text.status().message());
    return Json();
  }
  Json index = Json::parse(*text, nullptr, false);
  if (index.is_discarded() || !index.is_object() ||
      index.value("format", Json()) != Json("parity-region-replays") ||
      !index.contains("regions") || !index["regions"].is_object()) {
    *why = fmt::format("compared only: {} is not a parity-region-replays index", kIndex);
    return Json();
  }
  const std::string key = std::to_string(record.seq);
  if (!index["regions"].contains(key) || !index["regions"][key].is_object()) {
    *why = fmt::format("compared only: {} holds no replay of record {}", kIndex, record.seq);
    return Json();
  }
  return index["regions"][key];
}

}  // namespace

Result<OpReplay> ReplayRegion(const DumpDir& dump, const DumpRecord& record, OpReplay r) {
  std::string why;
  const Json entry = RegionEntry(dump, record, &why);
  if (entry.is_null()) {
    r.reason = why;
    return r;
  }
  if (entry.contains("reason")) {
    r.reason = "compared only: " +
               (entry["reason"].is_string() ? entry["reason"].get<std::string>() : "no reason");
    return r;
  }
  const Json outputs = entry.value("outputs", Json());
  const Json k = entry.value("k", Json());
  if (!outputs.is_array() || !k.is_number_integer() || k.get<int64_t>() < 1 ||
      outputs.size() != record.outputs.size()) {
    r.reason = fmt::format("compared only: {}'s entry for record {} does not fit its {} outputs",
                           kIndex, record.seq, record.outputs.size());
    return r;
  }
  ReplayError error;
  r.within_bound = true;
  for (std::size_t i = 0; i < record.outputs.size(); ++i) {
    const DumpTensorRef& ref = record.outputs[i];
    if (!ref.has_data()) {
      r.reason = fmt::format("compared only: output {} {}", i,
                             ref.comparable() ? "was saved as statistics only"
                                              : "is not comparable: " + ref.not_comparable);
      r.within_bound = false;
      return r;
    }
    PARITY_ASSIGN_OR_RETURN(const Tensor recorded, dump.Load(record, ref));
    DumpTensorRef replay_ref;
    replay_ref.file = outputs[i].is_string() ? outputs[i].get<std::string>() : "";
    replay_ref.dtype = DType::kFloat64;
    replay_ref.shape = ref.shape;
    auto replayed = replay_ref.file.empty() ? Result<Tensor>(Status::Invalid("", "no file named"))
                                            : dump.Load(record, replay_ref);
    if (!replayed.ok()) {
      r.reason =
          fmt::format("compared only: the replay of output {}: {}", i, replayed.status().message());
      r.within_bound = false;
      return r;
    }
    PARITY_ASSIGN_OR_RETURN(const Array expected, ToArray(*replayed));
    PARITY_ASSIGN_OR_RETURN(const Array got, ToArray(recorded));
    error.Add(got, expected);
    // The region's rounding: a reduction as long as its ops' together.
    ToleranceRequest request;
    request.k = k.get<int64_t>();
    Tolerance t =
        ResolveTolerance(request, {}, record.name,
                         RecordContext(record, "output", recorded.dtype(), recorded.meta().shape,
                                       {&dump.ManifestFor(record)}, i));
    PARITY_ASSIGN_OR_RETURN(OutputJudgement j, JudgeOutput(recorded, expected, std::move(t)));
    r.within_bound = r.within_bound && j.within;
    if (i == 0) r.tolerance = std::move(j.tolerance);
  }
  r.replayable = true;
  error.Into(&r);
  const int64_t ops = entry.value("ops", Json(0)).is_number_integer()
                          ? entry.value("ops", Json(0)).get<int64_t>()
                          : 0;
  r.reason = fmt::format("{} bound of PyTorch's float64 run of its graph ({} ops, K = {}){}",
                         r.within_bound ? "within the auto" : "beyond the", ops, k.get<int64_t>(),
                         r.within_bound ? "" : ": " + r.tolerance->reason);
  return r;
}

}  // namespace parity
