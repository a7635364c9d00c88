// SPDX-License-Identifier: Apache-2.0
#include "compare/entries.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace parity {

struct OpenFileCache {
  std::string path;
  std::shared_ptr<const TensorFile> file;
};

namespace {

namespace fs = std::filesystem;

Result<std::shared_ptr<const TensorFile>> OpenCached(OpenFileCache* cache,
                                                     const std::string& path) {
  if (cache->path != path || !cache->file) {
    PARITY_ASSIGN_OR_RETURN(std::unique_ptr<TensorFile> file, OpenTensorFile(path));
    cache->file = std::move(file);
    cache->path = path;
  }
  return cache->file;
}

Status AddFile(Side* side, const std::string& path, const std::string& prefix,
               const std::shared_ptr<OpenFileCache>& cache) {
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const TensorFile> file, OpenCached(cache.get(), path));
  const bool container = file->format() != FileFormat::kNpy;
  for (std::size_t i = 0; i < file->tensors().size(); ++i) {
    Entry e;
    e.meta = file->tensors()[i];
    e.path = path;
    e.index = i;
    e.cache = cache;
    e.key = prefix.empty() ? e.meta.name : (container ? prefix + ":" + e.meta.name : prefix);
    e.name = e.key;
    side->entries.push_back(std::move(e));
  }
  return Status::Ok();
}

void AddTensor(Side* side, const DumpRecord& r, const DumpTensorRef& ref, const std::string& role,
               const std::string& slot) {
  Entry e;
  e.name = fmt::format("{}.{}.{}", RecordTensorPrefix(r.rank, r.step, r.name, r.pass, r.call), role,
                       slot);
  e.key = e.name;
  e.meta.name = e.name;
  e.meta.dtype = ref.dtype;
  e.meta.shape = ref.shape;
  e.dump = side->dump.get();
  e.record = &r;
  e.ref = &ref;
  e.role = role;
  e.slot = role + "." + slot;
  side->entries.push_back(std::move(e));
}

std::string RecordKey(const DumpRecord& r) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", r.rank, r.step, r.name, r.pass, r.call);
}

// Each record's entries, in record order.
std::map<const DumpRecord*, std::vector<const Entry*>> ByRecord(const Side& side) {
  std::map<const DumpRecord*, std::vector<const Entry*>> out;
  for (const Entry& e : side.entries) out[e.record].push_back(&e);
  return out;
}

// Pairs the entries of two dumps: records first, then entries by slot within a record pair.
std::vector<std::pair<const Entry*, const Entry*>> PairDumpEntries(
    const Side& x, const Side& y, std::vector<std::string>* warnings) {
  const auto x_records = ByRecord(x);
  const auto y_records = ByRecord(y);
  static const std::vector<const Entry*> kNone;
  auto entries_of = [](const auto& index, const DumpRecord* r) -> const std::vector<const Entry*>& {
    if (r == nullptr) return kNone;
    auto it = index.find(r);
    return it == index.end() ? kNone : it->second;
  };
  std::vector<std::pair<const Entry*, const Entry*>> out;
  for (const auto& [rx, ry] : PairRecords(*x.dump, *y.dump, warnings)) {
    std::map<std::string, const Entry*> y_slots;
    for (const Entry* e : entries_of(y_records, ry)) y_slots[e->slot] = e;
    for (const Entry* e : entries_of(x_records, rx)) {
      auto it = y_slots.find(e->slot);
      if (it == y_slots.end()) {
        out.emplace_back(e, nullptr);
      } else {
        out.emplace_back(e, it->second);
        y_slots.erase(it);
      }
    }
    for (const Entry* e : entries_of(y_records, ry)) {
      if (y_slots.count(e->slot)) out.emplace_back(nullptr, e);
    }
  }
  return out;
}

// A shape recorded on both sides (a not-stored tensor may lack one).
bool ShapesKnown(const Entry* a, const Entry* b) {
  return (a->ref == nullptr || a->ref->shape_known) && (b->ref == nullptr || b->ref->shape_known);
}

std::string Structural(const Entry* a, const Entry* b) {
  if (a == nullptr) return "present in B only";
  if (b == nullptr) return "present in A only";
  if (a->DTypeName() != b->DTypeName()) {
    return fmt::format("dtype differs: {} vs {}", a->DTypeName(), b->DTypeName());
  }
  if (a->meta.shape != b->meta.shape && ShapesKnown(a, b)) {
    return fmt::format("shape differs: {} vs {}", ShapeString(a->meta.shape),
                       ShapeString(b->meta.shape));
  }
  return "";
}

// Why a pair of entries (both present) is not compared: "A: <reason>", "B: <reason>", or
// "A and B: <reason>" when both sides give the same one; "" when both are comparable.
std::string NotCompared(const Entry* a, const Entry* b) {
  if (a == nullptr || b == nullptr) return "";
  const bool in_a = !a->comparable(), in_b = !b->comparable();
  if (in_a && in_b) {
    if (a->ref->not_comparable == b->ref->not_comparable) {
      return "A and B: " + a->ref->not_comparable;
    }
    return fmt::format("A: {}; B: {}", a->ref->not_comparable, b->ref->not_comparable);
  }
  if (in_a) return "A: " + a->ref->not_comparable;
  if (in_b) return "B: " + b->ref->not_comparable;
  return "";
}

// Pairs plain entries: by key, then by tensor name where that is unique on both sides.
std::vector<std::pair<const Entry*, const Entry*>> PairByKey(const Side& a, const Side& b,
                                                             std::vector<std::string>* warnings) {
  std::vector<std::pair<const Entry*, const Entry*>> pairs;
  if (a.kind == Side::Kind::kFile && a.entries.size() == 1 && b.entries.size() == 1) {
    pairs.emplace_back(&a.entries[0], &b.entries[0]);
    return pairs;
  }
  std::map<std::string, const Entry*> b_by_key;
  for (const Entry& e : b.entries) b_by_key[e.key] = &e;
  std::vector<const Entry*> only_a;
  for (const Entry& e : a.entries) {
    auto it = b_by_key.find(e.key);
    if (it != b_by_key.end()) {
      pairs.emplace_back(&e, it->second);
      b_by_key.erase(it);
    } else {
      only_a.push_back(&e);
    }
  }
  // Fallback: a tensor name that is unique among the leftovers of each side.
  std::map<std::string, std::vector<const Entry*>> a_names, b_names;
  for (const Entry* e : only_a) a_names[e->meta.name].push_back(e);
  for (const auto& [key, e] : b_by_key) b_names[e->meta.name].push_back(e);
  std::vector<const Entry*> rest_b;
  for (const Entry* e : only_a) {
    const auto& as = a_names[e->meta.name];
    auto bit = b_names.find(e->meta.name);
    if (as.size() == 1 && bit != b_names.end() && bit->second.size() == 1) {
      warnings->push_back(
          fmt::format("'{}' and '{}' paired by tensor name alone", e->key, bit->second[0]->key));
      pairs.emplace_back(e, bit->second[0]);
      b_names.erase(bit);
    } else {
      pairs.emplace_back(e, nullptr);
    }
  }
  for (const auto& [name, es] : b_names) {
    for (const Entry* e : es) pairs.emplace_back(nullptr, e);
  }
  return pairs;
}

}  // namespace

std::string RecordTensorPrefix(int64_t rank, int64_t step, std::string_view name,
                               std::string_view pass, int64_t call) {
  std::string out;
  if (rank != 0) out += fmt::format("rank{}.", rank);
  if (step != 0) out += fmt::format("step{}.", step);
  return out + fmt::format("{}.{}.{}", name, pass, call);
}

std::vector<std::pair<const DumpRecord*, const DumpRecord*>> PairRecords(
    const DumpDir& a, const DumpDir& b, std::vector<std::string>* warnings) {
  std::map<std::string, const DumpRecord*> b_by_key;
  for (const DumpRecord& r : b.records()) b_by_key.emplace(RecordKey(r), &r);
  std::vector<std::pair<const DumpRecord*, const DumpRecord*>> pairs;
  std::vector<std::size_t> unmatched;
  for (const DumpRecord& r : a.records()) {
    auto it = b_by_key.find(RecordKey(r));
    if (it != b_by_key.end()) {
      pairs.emplace_back(&r, it->second);
      b_by_key.erase(it);
    } else {
      unmatched.push_back(pairs.size());
      pairs.emplace_back(&r, nullptr);
    }
  }
  std::map<std::pair<int64_t, int64_t>, const DumpRecord*> b_by_seq;
  for (const auto& [key, r] : b_by_key) b_by_seq.emplace(std::make_pair(r->rank, r->seq), r);
  for (std::size_t i : unmatched) {
    const DumpRecord* r = pairs[i].first;
    auto it = b_by_seq.find({r->rank, r->seq});
    if (it != b_by_seq.end()) {
      warnings->push_back(fmt::format("record '{}' (seq {}) matched by seq to '{}'", r->name,
                                      r->seq, it->second->name));
      pairs[i].second = it->second;
      b_by_seq.erase(it);
    }
  }
  for (const auto& [seq, r] : b_by_seq) pairs.emplace_back(nullptr, r);
  return pairs;
}

Result<Tensor> Entry::Load() const {
  if (memory) return *memory;
  if (dump != nullptr) return dump->Load(*record, *ref);
  PARITY_ASSIGN_OR_RETURN(std::shared_ptr<const TensorFile> file, OpenCached(cache.get(), path));
  return file->Load(index);
}

Result<Side> OpenSide(const std::string& path) {
  Side side;
  side.path = path;
  std::error_code ec;
  auto cache = std::make_shared<OpenFileCache>();
  if (!fs::is_directory(path, ec)) {
    side.kind = Side::Kind::kFile;
    PARITY_RETURN_IF_ERROR(AddFile(&side, path, "", cache));
    return side;
  }
  if (DumpDir::IsDump(path)) {
    side.kind = Side::Kind::kDump;
    PARITY_ASSIGN_OR_RETURN(DumpDir dump, DumpDir::Open(path));
    side.dump = std::make_unique<DumpDir>(std::move(dump));
    side.warnings = side.dump->warnings();
    std::vector<const DumpRecord*> order;
    for (const DumpRecord& r : side.dump->records()) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const DumpRecord* x, const DumpRecord* y) {
      return std::tie(x->seq, x->rank) < std::tie(y->seq, y->rank);
    });
    for (const DumpRecord* r : order) {
      for (std::size_t i = 0; i < r->inputs.size(); ++i) {
        AddTensor(&side, *r, r->inputs[i], "input", std::to_string(i));
      }
      for (const auto& [key, ref] : r->params) AddTensor(&side, *r, ref, "param", key);
      for (std::size_t i = 0; i < r->outputs.size(); ++i) {
        AddTensor(&side, *r, r->outputs[i], "output", std::to_string(i));
      }
    }
    return side;
  }
  side.kind = Side::Kind::kDirectory;
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> files, ListTensorFiles(path));
  for (const std::string& file : files) {
    std::string rel = fs::relative(file, path, ec).generic_string();
    if (ec) rel = file;
    if (rel.ends_with(".npy")) rel.resize(rel.size() - 4);
    PARITY_RETURN_IF_ERROR(AddFile(&side, file, rel, cache));
  }
  return side;
}

Side MemorySide(const std::string& name, Tensor tensor) {
  Side side;
  side.path = name;
  side.kind = Side::Kind::kFile;
  Entry e;
  e.meta = tensor.meta();
  e.meta.name = name;
  e.key = name;
  e.name = name;
  e.path = name;
  e.memory = std::move(tensor);
  side.entries.push_back(std::move(e));
  return side;
}

Result<std::vector<EntryPair>> PairSides(const Side& a, const Side& b, const Side* golden,
                                         std::vector<std::string>* warnings) {
  auto kind_name = [](Side::Kind k) {
    return k == Side::Kind::kFile        ? "a tensor file"
           : k == Side::Kind::kDirectory ? "a directory of tensor files"
                                         : "a dump directory";
  };
  for (const Side* other : {&b, golden}) {
    if (other != nullptr && other->kind != a.kind &&
        !(other->kind == Side::Kind::kFile && a.kind == Side::Kind::kFile)) {
      return Status::Invalid(other->path,
                             fmt::format("is {}, but {} is {}: compare like with like",
                                         kind_name(other->kind), a.path, kind_name(a.kind)));
    }
  }
  auto pair = a.kind == Side::Kind::kDump ? PairDumpEntries : PairByKey;
  const std::vector<std::pair<const Entry*, const Entry*>> pairs = pair(a, b, warnings);
  std::vector<std::pair<const Entry*, const Entry*>> golden_pairs;
  if (golden != nullptr) {
    std::vector<std::string> ignored;  // the A-B pairing already warned
    golden_pairs = pair(a, *golden, &ignored);
  }
  std::map<const Entry*, const Entry*> golden_of;
  for (const auto& [x, g] : golden_pairs) {
    if (x != nullptr) golden_of[x] = g;
  }
  std::vector<EntryPair> out;
  for (const auto& [x, y] : pairs) {
    EntryPair p;
    p.a = x;
    p.b = y;
    p.name = x ? x->name : y->name;
    if (x && y && x->name != y->name && a.kind != Side::Kind::kDump) {
      p.name = x->name + " ~ " + y->name;
    }
    if (x && golden_of.count(x)) p.golden = golden_of[x];
    p.structural = Structural(x, y);
    if (p.structural.empty()) p.not_compared = NotCompared(x, y);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace parity
