// SPDX-License-Identifier: Apache-2.0
#include "monitor/sample.h"

#include <string>

namespace parity::monitor {
namespace {

Json ReadingsToJson(const std::vector<Reading>& readings) {
  Json out = Json::array();
  for (const Reading& r : readings) {
    Json labels = Json::object();
    for (const auto& [k, v] : r.labels) labels[k] = v;
    Json entry = {{"name", r.metric}, {"labels", std::move(labels)}};
    SetNumber(entry, "value", r.value);
    out.push_back(std::move(entry));
  }
  return out;
}

void SetIfNotEmpty(Json& obj, const char* key, const std::string& value) {
  if (!value.empty()) obj[key] = value;
}

}  // namespace

Labels DeviceLabels(const DeviceReadings& device) {
  Labels labels = {{"device", std::to_string(device.device)}};
  if (!device.info.uuid.empty()) labels["uuid"] = device.info.uuid;
  if (!device.info.model.empty()) labels["model"] = device.info.model;
  if (!device.info.vendor.empty()) labels["vendor"] = device.info.vendor;
  return labels;
}

Json SampleToJson(const Sample& sample) {
  Json doc = Document("parity-monitor", 1);
  doc["kind"] = "sample";
  SetNumber(doc, "time", sample.time_unix);
  Json sources = Json::array();
  for (const SourceState& s : sample.sources) {
    Json entry = {{"name", s.name}, {"up", s.up}};
    if (!s.up) entry["reason"] = s.reason;
    sources.push_back(std::move(entry));
  }
  doc["sources"] = std::move(sources);
  Json devices = Json::array();
  for (const DeviceReadings& d : sample.devices) {
    Json entry = {{"device", d.device}, {"source", d.source}};
    SetIfNotEmpty(entry, "vendor", d.info.vendor);
    SetIfNotEmpty(entry, "model", d.info.model);
    SetIfNotEmpty(entry, "uuid", d.info.uuid);
    SetIfNotEmpty(entry, "pci_bus_id", d.info.pci_bus_id);
    entry["metrics"] = ReadingsToJson(d.readings);
    devices.push_back(std::move(entry));
  }
  doc["devices"] = std::move(devices);
  doc["host"] = {{"metrics", ReadingsToJson(sample.host)}};
  return doc;
}

}  // namespace parity::monitor
