// SPDX-License-Identifier: Apache-2.0
// manifest.json of a dump directory: the format and version, and version 2's level, mode,
// omitted ops and per-step evidence (generator digests, the GradScaler's state).
#include <fmt/format.h>

#include <set>

#include "io/dump_parse.h"

namespace parity::dump_internal {
namespace {

constexpr int kNewestVersion = 2;

// A key's value, or null when the key is absent or null (an optional key kept at its default).
const Json* Optional(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

bool IsCount(const Json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; }

Status ReadVersion(const std::string& path, const Json& manifest, DumpPart* part) {
  const auto version = manifest.find("version");
  if (version == manifest.end()) return Status::Invalid(path, "'version' is missing");
  if (!version->is_number_integer()) {
    return Status::Invalid(path, fmt::format("'version' is {}, not an integer (this parity reads "
                                             "versions 1 and 2)",
                                             version->dump()));
  }
  const int64_t v = version->get<int64_t>();
  if (v > kNewestVersion) {
    return Status::Invalid(
        path, fmt::format("format version {} is newer than this parity reads (1 and 2)", v));
  }
  if (v < 1) {
    return Status::Invalid(path,
                           fmt::format("'version' is {}; this parity reads versions 1 and 2", v));
  }
  part->version = static_cast<int>(v);
  return Status::Ok();
}

Status ReadStep(const std::string& path, const Json& entry, const std::string& what,
                DumpStep* step) {
  if (!entry.is_object()) return Status::Invalid(path, what + " is not an object");
  const auto number = entry.find("step");
  if (number == entry.end() || !IsCount(*number)) {
    return Status::Invalid(path, what + ": 'step' is missing or not a non-negative integer");
  }
  step->step = number->get<int64_t>();
  if (const Json* generators = Optional(entry, "generators")) {
    if (!generators->is_object()) {
      return Status::Invalid(path, what + ": 'generators' is not an object");
    }
    for (auto it = generators->begin(); it != generators->end(); ++it) {
      if (!it->is_string()) {
        return Status::Invalid(
            path, fmt::format("{}: generators.{} is not a string (a digest)", what, it.key()));
      }
      step->generators.emplace(it.key(), it->get<std::string>());
    }
  }
  if (const Json* scaler = Optional(entry, "scaler")) {
    if (!scaler->is_object()) return Status::Invalid(path, what + ": 'scaler' is not an object");
    if (const Json* scale = Optional(*scaler, "scale")) {
      if (!scale->is_number()) {
        return Status::Invalid(path, what + ": scaler.scale is not a number");
      }
      step->scale = scale->get<double>();
    }
    if (const Json* skipped = Optional(*scaler, "skipped")) {
      if (!skipped->is_boolean()) {
        return Status::Invalid(path, what + ": scaler.skipped is not true or false");
      }
      step->skipped = skipped->get<bool>();
    }
  }
  if (const Json* records = Optional(entry, "records")) {
    if (!IsCount(*records)) {
      return Status::Invalid(path, what + ": 'records' is not a non-negative integer");
    }
    step->records = records->get<int64_t>();
  }
  return Status::Ok();
}

// The keys version 2 adds; a version 1 manifest keeps the defaults whatever it holds.
Status ReadVersion2(const std::string& path, const Json& manifest, DumpPart* part) {
  part->level = "aten";
  if (const Json* level = Optional(manifest, "level")) {
    if (*level != "aten" && *level != "modules") {
      return Status::Invalid(
          path, fmt::format("'level' is {}, expected \"aten\" or \"modules\"", level->dump()));
    }
    part->level = level->get<std::string>();
  }
  if (const Json* mode = Optional(manifest, "mode")) {
    if (*mode != "tensors" && *mode != "stats" && *mode != "hashes") {
      return Status::Invalid(
          path,
          fmt::format("'mode' is {}, expected \"tensors\", \"stats\" or \"hashes\"", mode->dump()));
    }
    part->mode = mode->get<std::string>();
  }
  if (const Json* hash = Optional(manifest, "hash")) {
    if (!hash->is_string() || hash->get<std::string>().empty()) {
      return Status::Invalid(path, "'hash' is not the name of a digest algorithm (a string)");
    }
    part->hash = hash->get<std::string>();
  }
  if (const Json* rank = Optional(manifest, "rank")) {
    if (!IsCount(*rank)) return Status::Invalid(path, "'rank' is not a non-negative integer");
    if (!part->dir_rank) part->rank = rank->get<int64_t>();
  }
  if (const Json* world = Optional(manifest, "world_size")) {
    if (!world->is_number_integer() || world->get<int64_t>() < 1) {
      return Status::Invalid(path, "'world_size' is not a positive integer");
    }
    part->world_size = world->get<int64_t>();
  }
  if (const Json* omitted = Optional(manifest, "omitted")) {
    if (!omitted->is_object()) return Status::Invalid(path, "'omitted' is not an object");
    for (auto it = omitted->begin(); it != omitted->end(); ++it) {
      if (!IsCount(*it)) {
        return Status::Invalid(
            path, fmt::format("omitted.{} is not a non-negative integer (a count)", it.key()));
      }
      part->omitted[it.key()] = it->get<int64_t>();
    }
  }
  if (const Json* truncated = Optional(manifest, "truncated_at_seq")) {
    if (!IsCount(*truncated)) {
      return Status::Invalid(path, "'truncated_at_seq' is not a non-negative integer");
    }
    part->truncated_at_seq = truncated->get<int64_t>();
  }
  if (const Json* steps = Optional(manifest, "steps")) {
    if (!steps->is_array()) return Status::Invalid(path, "'steps' is not an array");
    std::set<int64_t> seen;
    for (std::size_t i = 0; i < steps->size(); ++i) {
      DumpStep step;
      const std::string what = fmt::format("steps[{}]", i);
      PARITY_RETURN_IF_ERROR(ReadStep(path, (*steps)[i], what, &step));
      if (!seen.insert(step.step).second) {
        return Status::Invalid(path, fmt::format("{}: step {} is listed twice", what, step.step));
      }
      part->steps.push_back(std::move(step));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadManifest(const std::string& manifest_path, DumpPart* part) {
  const Json& manifest = part->manifest;
  if (!manifest.is_object()) return Status::Invalid(manifest_path, "not a JSON object");
  const auto format = manifest.find("format");
  if (format == manifest.end() || *format != "parity-dump") {
    return Status::Invalid(manifest_path, "'format' is not \"parity-dump\"");
  }
  PARITY_RETURN_IF_ERROR(ReadVersion(manifest_path, manifest, part));
  if (part->dir_rank) part->rank = *part->dir_rank;
  if (part->version >= 2) PARITY_RETURN_IF_ERROR(ReadVersion2(manifest_path, manifest, part));
  return Status::Ok();
}

}  // namespace parity::dump_internal
