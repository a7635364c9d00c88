// SPDX-License-Identifier: Apache-2.0
#include "stress/fault_tracking.h"

#include <fmt/format.h>

#include <algorithm>

namespace parity::stress {

FaultRecord UnplannedFault(int worker, double time, std::string kind, std::string detail) {
  FaultRecord record;
  record.kind = std::move(kind);
  record.injected = false;
  record.worker = worker;
  record.time = time;
  record.detail = std::move(detail);
  return record;
}

void FaultBook::Add(FaultRecord record, Open open) {
  open.worker = record.worker;
  open.time = record.time;
  records_->push_back(std::move(record));
  open.record = records_->size() - 1;
  open_.push_back(open);
}

void FaultBook::OpenInjected(FaultRecord record, std::int64_t generation, const FiredFault& fired) {
  Open open;
  open.generation = generation;
  open.needs_new_process = fired.needs_new_process;
  open.needs_lift = fired.disk_full;
  open.sdc = fired.sdc;
  open.plant_seed = fired.plant_seed;
  Add(std::move(record), open);
}

void FaultBook::OpenUnplanned(FaultRecord record, std::int64_t generation,
                              const std::string& repeat_how) {
  // A worker failing again before any step is the same fault, still open: counted on it.
  const auto same = std::find_if(open_.begin(), open_.end(), [&](const Open& f) {
    return f.worker == record.worker && !(*records_)[f.record].injected;
  });
  if (!repeat_how.empty() && same != open_.end()) {
    FaultRecord& open = (*records_)[same->record];
    ++open.repeats;
    open.detail =
        fmt::format("{} (and {} more times: last {})",
                    open.detail.substr(0, open.detail.find(" (and ")), open.repeats, repeat_how);
    return;
  }
  record.injected = false;
  Open open;
  open.generation = generation;
  open.needs_new_process = true;
  Add(std::move(record), open);
}

void FaultBook::OnStep(int worker, std::int64_t generation, std::int64_t step, bool disk_full,
                       double time) {
  for (auto it = open_.begin(); it != open_.end();) {
    const Open& fault = *it;
    FaultRecord& record = (*records_)[fault.record];
    bool close = false;
    if (fault.worker != worker) {
    } else if (fault.sdc) {
      if (fault.sdc_step && step >= *fault.sdc_step) {
        record.recovered = false;
        record.detail +=
            fmt::format("; the flip planted in step {} was not reported", *fault.sdc_step);
        close = true;
      }
    } else if ((!fault.needs_new_process || generation > fault.generation) &&
               !(fault.needs_lift && disk_full)) {
      record.recovered = true;
      record.recovery_seconds = time - fault.time;
      close = true;
    }
    it = close ? open_.erase(it) : it + 1;
  }
}

void FaultBook::OnSdcEvent(int worker, const Json& event, double time) {
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    if (!it->sdc || it->worker != worker || !it->sdc_step) continue;
    FaultRecord& record = (*records_)[it->record];
    if (event.value("step", std::int64_t{-1}) == *it->sdc_step &&
        event.value("position", Json()) == record.planted.value("position", Json()) &&
        event.value("array", std::string()) == record.planted.value("array", std::string())) {
      record.recovered = true;
      record.recovery_seconds = time - it->time;
      record.detail += "; reported at that position";
      open_.erase(it);
      return;
    }
  }
}

void FaultBook::OnPlanted(int worker, const Json& line) {
  for (Open& fault : open_) {
    if (!fault.sdc || fault.worker != worker || fault.sdc_step) continue;
    fault.sdc_step = line.value("step", std::int64_t{0});
    FaultRecord& record = (*records_)[fault.record];
    record.planted = {{"step", *fault.sdc_step},
                      {"array", line.value("array", std::string())},
                      {"position", line.value("position", Json::array())},
                      {"bit", line.value("bit", 0)}};
    record.detail = fmt::format("bit {} of {}{} flipped in step {}", line.value("bit", 0),
                                line.value("array", std::string()),
                                line.value("position", Json::array()).dump(), *fault.sdc_step);
    return;
  }
}

bool FaultBook::HasOpen(int worker) const {
  return std::any_of(open_.begin(), open_.end(),
                     [&](const Open& f) { return f.worker == worker && !f.sdc; });
}

bool FaultBook::HasOpenHang(int worker) const {
  return std::any_of(open_.begin(), open_.end(), [&](const Open& f) {
    return f.worker == worker && (*records_)[f.record].kind == "hang";
  });
}

std::vector<std::uint64_t> FaultBook::UnplantedSeeds(int worker) const {
  std::vector<std::uint64_t> seeds;
  for (const Open& fault : open_) {
    if (fault.sdc && fault.worker == worker && !fault.sdc_step) seeds.push_back(fault.plant_seed);
  }
  return seeds;
}

void FaultBook::Finish(bool interrupted) {
  for (const Open& fault : open_) {
    FaultRecord& record = (*records_)[fault.record];
    if (!record.recovered) {
      record.detail += interrupted ? "; the run was interrupted before it recovered"
                                   : "; not recovered by the end of the run";
    }
  }
}

}  // namespace parity::stress
