// SPDX-License-Identifier: Apache-2.0
#include "monitor/source_rocm_smi.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dynlib.h"
#include "monitor/rocm_smi_api.h"

namespace parity::monitor {
namespace {

/// Runs `call` with file descriptor 2 pointed at /dev/null, and restores it.
template <typename F>
auto WithStderrSilenced(F call) {
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved >= 0 && null >= 0) ::dup2(null, STDERR_FILENO);
  auto result = call();
  std::fflush(stderr);
  if (saved >= 0) {
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
  }
  if (null >= 0) ::close(null);
  return result;
}

using rsmi::GpuBlock;

constexpr std::string_view kSourceName = "rocm-smi";
// Bounds a library's answer before parity allocates for it.
constexpr uint32_t kMaxReservedPages = 1u << 20;

/// The ROCm SMI calls the source makes; those past num_monitor_devices may be null, and the
/// readings they give are then left out.
struct Api {
  rsmi::InitFn init = nullptr;
  rsmi::ShutDownFn shut_down = nullptr;
  rsmi::NumMonitorDevicesFn num_monitor_devices = nullptr;
  rsmi::StatusStringFn status_string = nullptr;
  rsmi::DevNameGetFn name = nullptr;
  rsmi::DevBrandGetFn brand = nullptr;
  rsmi::DevUniqueIdGetFn unique_id = nullptr;
  rsmi::DevPciIdGetFn pci_id = nullptr;
  rsmi::DevPciBandwidthGetFn pci_bandwidth = nullptr;
  rsmi::DevPciReplayCounterGetFn pci_replay_counter = nullptr;
  rsmi::DevPowerAveGetFn power_ave = nullptr;
  rsmi::DevPowerCapGetFn power_cap = nullptr;
  rsmi::DevMemoryTotalGetFn memory_total = nullptr;
  rsmi::DevMemoryUsageGetFn memory_usage = nullptr;
  rsmi::DevMemoryReservedPagesGetFn reserved_pages = nullptr;
  rsmi::DevTempMetricGetFn temp_metric = nullptr;
  rsmi::DevBusyPercentGetFn busy_percent = nullptr;
  rsmi::DevGpuClkFreqGetFn gpu_clk_freq = nullptr;
  rsmi::DevEccEnabledGetFn ecc_enabled = nullptr;
  rsmi::DevEccCountGetFn ecc_count = nullptr;
};

struct TemperatureSensor {
  rsmi::TemperatureType type;
  const char* label;
};
constexpr TemperatureSensor kSensors[] = {{rsmi::TemperatureType::kEdge, "edge"},
                                          {rsmi::TemperatureType::kJunction, "junction"},
                                          {rsmi::TemperatureType::kMemory, "memory"}};

struct Clock {
  rsmi::ClkType type;
  const char* domain;
};
constexpr Clock kClocks[] = {{rsmi::ClkType::kSys, "sm"}, {rsmi::ClkType::kMem, "memory"}};

struct Block {
  GpuBlock block;
  const char* label;
};
constexpr Block kBlocks[] = {
    {GpuBlock::kUmc, "umc"},     {GpuBlock::kSdma, "sdma"},
    {GpuBlock::kGfx, "gfx"},     {GpuBlock::kMmhub, "mmhub"},
    {GpuBlock::kAthub, "athub"}, {GpuBlock::kPcieBif, "pcie_bif"},
    {GpuBlock::kHdp, "hdp"},     {GpuBlock::kXgmiWafl, "xgmi_wafl"},
    {GpuBlock::kDf, "df"},       {GpuBlock::kSmn, "smn"},
    {GpuBlock::kSem, "sem"},     {GpuBlock::kMp0, "mp0"},
    {GpuBlock::kMp1, "mp1"},     {GpuBlock::kFuse, "fuse"},
};

/// The retired-page causes of gpu_retired_pages_total, indexed by rsmi::MemoryPageStatus.
constexpr const char* kPageCauses[] = {"bad_page_reserved", "bad_page_pending",
                                       "bad_page_unreservable"};

/// The PCIe generation whose per-lane rate is `transfers_per_second`, or 0 for none.
int PcieGeneration(uint64_t transfers_per_second) {
  constexpr double kRates[] = {2.5e9, 5e9, 8e9, 16e9, 32e9, 64e9};  // generations 1..6
  for (std::size_t i = 0; i < std::size(kRates); ++i) {
    if (std::fabs(static_cast<double>(transfers_per_second) - kRates[i]) < 0.05 * kRates[i]) {
      return static_cast<int>(i) + 1;
    }
  }
  return 0;
}

/// The entry `f.current` of a frequency table, when it names a valid one.
std::optional<uint64_t> Current(const rsmi::Frequencies& f) {
  const uint32_t size =
      std::min<uint32_t>(f.num_supported, static_cast<uint32_t>(rsmi::kMaxNumFrequencies));
  if (f.current >= size) return std::nullopt;
  return f.frequency[f.current];
}

/// "dddd:bb:dd.f" from rsmi_dev_pci_id_get's BDFID.
std::string PciBusId(uint64_t bdfid) {
  char text[32];
  std::snprintf(text, sizeof text, "%04" PRIx64 ":%02" PRIx64 ":%02" PRIx64 ".%" PRIx64,
                bdfid >> 32, (bdfid >> 8) & 0xff, (bdfid >> 3) & 0x1f, bdfid & 0x7);
  return text;
}

/// Whether a call failing with `status` says the device is no longer there.
bool MeansGone(rsmi::Status status) {
  return status == rsmi::Status::kNotFound || status == rsmi::Status::kInvalidArgs ||
         status == rsmi::Status::kFileError;
}

/// The outcomes of one Read's calls: a device none of whose calls answers, and whose failures
/// all say it is gone, is reported down rather than as a device without readings.
class Outcomes {
 public:
  /// Records `status`; true when the call answered.
  bool Answered(rsmi::Status status) {
    if (status == rsmi::Status::kSuccess) {
      ++answered_;
      return true;
    }
    ++failed_;
    if (MeansGone(status)) {
      ++gone_;
      last_gone_ = status;
    }
    return false;
  }
  bool gone() const { return answered_ == 0 && failed_ > 0 && gone_ == failed_; }
  rsmi::Status last_gone() const { return last_gone_; }

 private:
  int answered_ = 0;
  int failed_ = 0;
  int gone_ = 0;
  rsmi::Status last_gone_ = rsmi::Status::kSuccess;
};

class RocmSmiSource final : public TelemetrySource {
 public:
  explicit RocmSmiSource(std::string library) : library_(std::move(library)) {}
  ~RocmSmiSource() override { Close(); }
  RocmSmiSource(const RocmSmiSource&) = delete;
  RocmSmiSource& operator=(const RocmSmiSource&) = delete;

  std::string_view name() const override { return kSourceName; }
  Status Open() override;
  const std::vector<DeviceInfo>& devices() const override { return devices_; }
  Result<std::vector<Reading>> Read(std::size_t index, double now_seconds) override;

 private:
  /// Resolves the calls of the library `handle` (loaded from `path`, and owned from now on),
  /// initialises ROCm SMI and lists the devices.
  Status Start(void* handle, const std::string& path);
  /// Shuts ROCm SMI down and unloads the library, when they were set up.
  void Close();
  /// ROCm SMI's description of `status` and its code, e.g. "… (rsmi_status_t 8)".
  std::string Describe(rsmi::Status status) const;
  /// What device `index` is, from the calls that answer.
  DeviceInfo Info(uint32_t index) const;
  std::optional<double> PowerCapWatts(uint32_t index, Outcomes* outcomes) const;
  std::optional<double> VramTotalBytes(uint32_t index, Outcomes* outcomes) const;
  void ReadEcc(uint32_t index, Outcomes* outcomes, std::vector<Reading>* out) const;
  void ReadRetiredPages(uint32_t index, Outcomes* outcomes, std::vector<Reading>* out) const;

  std::string library_;
  void* handle_ = nullptr;
  bool initialized_ = false;
  Api api_;
  std::vector<DeviceInfo> devices_;
};

Status RocmSmiSource::Open() {
  Close();
  std::vector<std::string> candidates;
  if (!library_.empty()) {
    candidates.push_back(library_);
  } else if (const char* path = std::getenv("PARITY_ROCM_SMI_LIBRARY");
             path != nullptr && *path != '\0') {
    candidates.emplace_back(path);
  } else {
    candidates = {"librocm_smi64.so.1", "librocm_smi64.so", "/opt/rocm/lib/librocm_smi64.so.1"};
  }
  std::string tried;
  for (const std::string& candidate : candidates) {
    Result<void*> handle = OpenLibrary(candidate);
    // A library that loads is the answer, whatever it then says; only a missing one is skipped.
    if (handle.ok()) return Start(*handle, candidate);
    tried += (tried.empty() ? "" : "; ") + handle.status().message();
  }
  if (candidates.size() == 1) return Status::Unavailable(tried);
  return Status::Unavailable("ROCm SMI not found (" + tried + ")");
}

Status RocmSmiSource::Start(void* handle, const std::string& path) {
  handle_ = handle;
  SymbolResolver symbols(handle, path);
  symbols.Require({"rsmi_init"}, &api_.init);
  symbols.Require({"rsmi_shut_down"}, &api_.shut_down);
  symbols.Require({"rsmi_num_monitor_devices"}, &api_.num_monitor_devices);
  if (Status status = symbols.status(); !status.ok()) {
    Close();
    return status;
  }
  symbols.Optional({"rsmi_status_string"}, &api_.status_string);
  symbols.Optional({"rsmi_dev_name_get"}, &api_.name);
  symbols.Optional({"rsmi_dev_brand_get"}, &api_.brand);
  symbols.Optional({"rsmi_dev_unique_id_get"}, &api_.unique_id);
  symbols.Optional({"rsmi_dev_pci_id_get"}, &api_.pci_id);
  symbols.Optional({"rsmi_dev_pci_bandwidth_get"}, &api_.pci_bandwidth);
  symbols.Optional({"rsmi_dev_pci_replay_counter_get"}, &api_.pci_replay_counter);
  symbols.Optional({"rsmi_dev_power_ave_get"}, &api_.power_ave);
  symbols.Optional({"rsmi_dev_power_cap_get"}, &api_.power_cap);
  symbols.Optional({"rsmi_dev_memory_total_get"}, &api_.memory_total);
  symbols.Optional({"rsmi_dev_memory_usage_get"}, &api_.memory_usage);
  symbols.Optional({"rsmi_dev_memory_reserved_pages_get"}, &api_.reserved_pages);
  symbols.Optional({"rsmi_dev_temp_metric_get"}, &api_.temp_metric);
  symbols.Optional({"rsmi_dev_busy_percent_get"}, &api_.busy_percent);
  symbols.Optional({"rsmi_dev_gpu_clk_freq_get"}, &api_.gpu_clk_freq);
  symbols.Optional({"rsmi_dev_ecc_enabled_get"}, &api_.ecc_enabled);
  symbols.Optional({"rsmi_dev_ecc_count_get"}, &api_.ecc_count);

  // ROCm SMI prints its own diagnostics to stderr when it finds no GPU ("Failed to open drm
  // root directory", "Exception caught: rsmi_init."); the status says the same, once, in
  // parity's words. Single-threaded here: Open() runs before the exporter starts.
  const rsmi::Status init_status = WithStderrSilenced([&] { return api_.init(0); });
  if (const rsmi::Status status = init_status; status != rsmi::Status::kSuccess) {
    Status failed = Status::Unavailable(path + ": rsmi_init failed: " + Describe(status));
    Close();
    return failed;
  }
  initialized_ = true;
  uint32_t count = 0;
  if (const rsmi::Status status = api_.num_monitor_devices(&count);
      status != rsmi::Status::kSuccess) {
    Status failed =
        Status::Unavailable(path + ": rsmi_num_monitor_devices failed: " + Describe(status));
    Close();
    return failed;
  }
  if (count == 0) {
    Close();
    return Status::Unavailable(path + ": no AMD GPU (ROCm SMI found no device)");
  }
  devices_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) devices_.push_back(Info(i));
  return Status::Ok();
}

void RocmSmiSource::Close() {
  if (initialized_) api_.shut_down();
  initialized_ = false;
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
  api_ = Api{};
  devices_.clear();
}

std::string RocmSmiSource::Describe(rsmi::Status status) const {
  const std::string code = "rsmi_status_t " + std::to_string(static_cast<uint32_t>(status));
  const char* text = nullptr;
  if (api_.status_string != nullptr) api_.status_string(status, &text);
  if (text == nullptr || *text == '\0') return code;
  return std::string(text) + " (" + code + ")";
}

DeviceInfo RocmSmiSource::Info(uint32_t index) const {
  DeviceInfo info;
  info.vendor = "AMD";
  char text[256] = {};
  if (api_.name != nullptr && api_.name(index, text, sizeof text) == rsmi::Status::kSuccess) {
    info.model = text;
  }
  if (info.model.empty() && api_.brand != nullptr &&
      api_.brand(index, text, sizeof text) == rsmi::Status::kSuccess) {
    info.model = text;
  }
  uint64_t value = 0;
  if (api_.unique_id != nullptr && api_.unique_id(index, &value) == rsmi::Status::kSuccess) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%" PRIx64, value);
    info.uuid = hex;
  }
  if (api_.pci_id != nullptr && api_.pci_id(index, &value) == rsmi::Status::kSuccess) {
    info.pci_bus_id = PciBusId(value);
  }
  Outcomes ignored;
  info.power_limit_watts = PowerCapWatts(index, &ignored);
  info.memory_total_bytes = VramTotalBytes(index, &ignored);
  int64_t millidegrees = 0;
  if (api_.temp_metric != nullptr &&
      api_.temp_metric(index, static_cast<uint32_t>(rsmi::TemperatureType::kJunction),
                       rsmi::TemperatureMetric::kCritical,
                       &millidegrees) == rsmi::Status::kSuccess) {
    info.temperature_limit_celsius = static_cast<double>(millidegrees) / 1000.0;
  }
  return info;
}

std::optional<double> RocmSmiSource::PowerCapWatts(uint32_t index, Outcomes* outcomes) const {
  uint64_t microwatts = 0;
  if (api_.power_cap == nullptr || !outcomes->Answered(api_.power_cap(index, 0, &microwatts))) {
    return std::nullopt;
  }
  return static_cast<double>(microwatts) / 1e6;
}

std::optional<double> RocmSmiSource::VramTotalBytes(uint32_t index, Outcomes* outcomes) const {
  uint64_t bytes = 0;
  if (api_.memory_total == nullptr ||
      !outcomes->Answered(api_.memory_total(index, rsmi::MemoryType::kVram, &bytes))) {
    return std::nullopt;
  }
  return static_cast<double>(bytes);
}

Result<std::vector<Reading>> RocmSmiSource::Read(std::size_t index, double /*now_seconds*/) {
  if (index >= devices_.size()) {
    return Status::Internal("rocm-smi: device index " + std::to_string(index) + " out of range (" +
                            std::to_string(devices_.size()) + " devices)");
  }
  const auto i = static_cast<uint32_t>(index);
  Outcomes outcomes;
  std::vector<Reading> out;
  auto add = [&out](const char* metric, double value, Labels labels = {}) {
    out.push_back({metric, std::move(labels), value});
  };

  if (api_.temp_metric != nullptr) {
    for (const TemperatureSensor& sensor : kSensors) {
      int64_t millidegrees = 0;
      if (outcomes.Answered(api_.temp_metric(i, static_cast<uint32_t>(sensor.type),
                                             rsmi::TemperatureMetric::kCurrent, &millidegrees))) {
        add("gpu_temperature_celsius", static_cast<double>(millidegrees) / 1000.0,
            {{"sensor", sensor.label}});
      }
    }
  }
  uint64_t value = 0;
  if (api_.power_ave != nullptr && outcomes.Answered(api_.power_ave(i, 0, &value))) {
    add("gpu_power_watts", static_cast<double>(value) / 1e6);
  }
  if (auto watts = PowerCapWatts(i, &outcomes)) add("gpu_power_limit_watts", *watts);
  uint32_t percent = 0;
  if (api_.busy_percent != nullptr && outcomes.Answered(api_.busy_percent(i, &percent)) &&
      percent <= 100) {
    add("gpu_utilization_ratio", percent / 100.0);
  }
  if (api_.memory_usage != nullptr &&
      outcomes.Answered(api_.memory_usage(i, rsmi::MemoryType::kVram, &value))) {
    add("gpu_memory_used_bytes", static_cast<double>(value));
  }
  if (auto bytes = VramTotalBytes(i, &outcomes)) add("gpu_memory_total_bytes", *bytes);
  if (api_.gpu_clk_freq != nullptr) {
    for (const Clock& clock : kClocks) {
      rsmi::Frequencies f{};
      if (!outcomes.Answered(api_.gpu_clk_freq(i, clock.type, &f))) continue;
      if (auto hertz = Current(f)) {
        add("gpu_clock_hertz", static_cast<double>(*hertz), {{"domain", clock.domain}});
      }
    }
  }
  ReadEcc(i, &outcomes, &out);
  ReadRetiredPages(i, &outcomes, &out);
  if (api_.pci_replay_counter != nullptr && outcomes.Answered(api_.pci_replay_counter(i, &value))) {
    add("gpu_pcie_replay_total", static_cast<double>(value));
  }
  rsmi::PcieBandwidth bandwidth{};
  if (api_.pci_bandwidth != nullptr && outcomes.Answered(api_.pci_bandwidth(i, &bandwidth))) {
    if (auto rate = Current(bandwidth.transfer_rate)) {
      if (const int generation = PcieGeneration(*rate); generation > 0) {
        add("gpu_pcie_link_generation", generation);
      }
      if (const uint32_t lanes = bandwidth.lanes[bandwidth.transfer_rate.current]; lanes > 0) {
        add("gpu_pcie_link_width", lanes);
      }
    }
  }

  if (outcomes.gone()) {
    const DeviceInfo& info = devices_[index];
    return Status::Unavailable("rocm-smi: device " + std::to_string(index) +
                               (info.pci_bus_id.empty() ? "" : " (" + info.pci_bus_id + ")") +
                               " does not answer: " + Describe(outcomes.last_gone()));
  }
  return out;
}

void RocmSmiSource::ReadEcc(uint32_t index, Outcomes* outcomes, std::vector<Reading>* out) const {
  uint64_t enabled = 0;
  if (api_.ecc_enabled == nullptr || api_.ecc_count == nullptr ||
      !outcomes->Answered(api_.ecc_enabled(index, &enabled))) {
    return;
  }
  for (const Block& block : kBlocks) {
    if ((enabled & static_cast<uint64_t>(block.block)) == 0) continue;
    rsmi::ErrorCount count{};
    if (!outcomes->Answered(api_.ecc_count(index, block.block, &count))) continue;
    out->push_back({"gpu_ecc_errors_total",
                    {{"severity", "correctable"}, {"block", block.label}},
                    static_cast<double>(count.correctable_err)});
    out->push_back({"gpu_ecc_errors_total",
                    {{"severity", "uncorrectable"}, {"block", block.label}},
                    static_cast<double>(count.uncorrectable_err)});
  }
}

void RocmSmiSource::ReadRetiredPages(uint32_t index, Outcomes* outcomes,
                                     std::vector<Reading>* out) const {
  if (api_.reserved_pages == nullptr) return;
  uint32_t count = 0;
  const rsmi::Status query = api_.reserved_pages(index, &count, nullptr);
  if (!outcomes->Answered(query == rsmi::Status::kInsufficientSize ? rsmi::Status::kSuccess
                                                                   : query)) {
    return;
  }
  std::vector<rsmi::RetiredPageRecord> records;
  // Pages retired between the count and the read make the second call come back short; ask
  // again with room for what it says there is.
  for (int attempt = 0; count > 0; ++attempt) {
    if (attempt == 3 || count > kMaxReservedPages) return;
    records.assign(count, rsmi::RetiredPageRecord{});
    uint32_t written = count;
    const rsmi::Status status = api_.reserved_pages(index, &written, records.data());
    if (status == rsmi::Status::kSuccess) {
      records.resize(std::min(written, count));
      break;
    }
    if (status != rsmi::Status::kInsufficientSize) {
      outcomes->Answered(status);
      return;
    }
    count = std::max(written, count * 2);
  }
  double by_cause[std::size(kPageCauses)] = {};
  for (const rsmi::RetiredPageRecord& record : records) {
    const auto cause = static_cast<uint32_t>(record.status);
    if (cause < std::size(kPageCauses)) by_cause[cause] += 1;
  }
  for (std::size_t cause = 0; cause < std::size(kPageCauses); ++cause) {
    out->push_back({"gpu_retired_pages_total", {{"cause", kPageCauses[cause]}}, by_cause[cause]});
  }
}

}  // namespace

std::unique_ptr<TelemetrySource> MakeRocmSmiSource(std::string library) {
  return std::make_unique<RocmSmiSource>(std::move(library));
}

}  // namespace parity::monitor
