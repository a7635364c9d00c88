// SPDX-License-Identifier: Apache-2.0
#include "workload/tune_journal.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/file_util.h"

namespace parity::workload {
namespace {

constexpr std::size_t kMaxJournalBytes = std::size_t{256} << 20;
constexpr std::string_view kFormat = "parity-tune-journal";

Json Header(const Json& run) { return {{"format", kFormat}, {"version", 1}, {"run", run}}; }

// The first field of `want` that `got` lacks or gives otherwise.
std::string FirstDifference(const Json& got, const Json& want) {
  if (!got.is_object()) return "run";
  for (const auto& [key, value] : want.items()) {
    if (!got.contains(key) || got[key] != value) return key;
  }
  for (const auto& [key, value] : got.items()) {
    if (!want.contains(key)) return key;
  }
  return "";
}

Status WriteLine(const std::string& path, const Json& line, const char* mode) {
  std::FILE* f = std::fopen(path.c_str(), mode);
  if (f == nullptr) return Status::Invalid(path, "cannot write the journal");
  const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !ok) return Status::Invalid(path, "cannot write the journal");
  return Status::Ok();
}

}  // namespace

std::string TuneJournal::Key(const Json& config, int rung, int steps, uint64_t seed,
                             bool envelope) {
  return fmt::format("{}|{}|{}|{}|{}", config.dump(), rung, steps, seed, envelope);
}

Result<TuneJournal> TuneJournal::Open(const std::string& path, const Json& run) {
  TuneJournal j;
  j.path_ = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    PARITY_RETURN_IF_ERROR(WriteLine(path, Header(run), "w"));
    return j;
  }
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          ReadSmallFile(path, kMaxJournalBytes, "tune journal"));
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const bool last = in.peek() == std::char_traits<char>::eof();
    const bool cut = last && !text.empty() && text.back() != '\n';
    auto bad = [&](const std::string& what) {
      return Status::Invalid(path, fmt::format("line {}: {}", number, what));
    };
    Json entry = Json::parse(line, nullptr, false);
    if (entry.is_discarded() || !entry.is_object()) {
      if (cut && number > 1) {  // the trial being written when the run was killed: cut off
        j.dropped_ = true;
        std::filesystem::resize_file(path, text.rfind('\n') + 1, ec);
        if (ec) return Status::Invalid(path, "cannot cut the journal's last, partial line");
        break;
      }
      return bad("not a JSON object");
    }
    if (number == 1) {
      if (entry.value("format", Json()) != Json(kFormat) || entry.value("version", Json()) != 1) {
        return bad("not a parity tune journal (format parity-tune-journal, version 1)");
      }
      const std::string differs = FirstDifference(entry.value("run", Json()), run);
      if (!differs.empty()) {
        return bad(fmt::format(
            "the journal of another tune run: its '{}' differs from this run's (give another "
            "--journal, or remove this one to start afresh)",
            differs));
      }
      continue;
    }
    const Json config = entry.value("config", Json());
    const Json steps = entry.value("steps", Json()), seed = entry.value("seed", Json());
    const Json rung = entry.value("rung", Json());
    const Json envelope = entry.value("envelope", Json());
    if (!config.is_object() || !rung.is_number_integer() || !steps.is_number_integer() ||
        !seed.is_number_unsigned() || !envelope.is_boolean() ||
        !entry.value("status", Json()).is_string() || !entry.value("seconds", Json()).is_number() ||
        !entry.value("samples", Json()).is_array()) {
      return bad(
          "not a finished trial (config, rung, steps, seed, envelope, status, seconds, samples)");
    }
    j.trials_[Key(config, rung.get<int>(), steps.get<int>(), seed.get<uint64_t>(),
                  envelope.get<bool>())] = std::move(entry);
  }
  if (number == 0) return Status::Invalid(path, "line 1: empty, not a parity tune journal");
  // A whole last line without its newline: end it, so that the next trial starts a line.
  if (!j.dropped_ && text.back() != '\n') {
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (f == nullptr) return Status::Invalid(path, "cannot write the journal");
    const bool ok = std::fputc('\n', f) != EOF;
    if (std::fclose(f) != 0 || !ok) return Status::Invalid(path, "cannot write the journal");
  }
  return j;
}

const Json* TuneJournal::Find(const Json& config, int rung, int steps, uint64_t seed,
                              bool envelope) const {
  const auto it = trials_.find(Key(config, rung, steps, seed, envelope));
  return it == trials_.end() ? nullptr : &it->second;
}

Status TuneJournal::Append(const Json& trial) { return WriteLine(path_, trial, "a"); }

}  // namespace parity::workload
