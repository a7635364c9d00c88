// SPDX-License-Identifier: Apache-2.0
// What every handler of `parity serve` shares: the options, the read-only store, bounded
// in-memory caches of the answers that are slow to compute (compare, explain), and the JSON
// answer type.
#ifndef PARITY_SERVE_CONTEXT_H_
#define PARITY_SERVE_CONTEXT_H_

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "explain/explain.h"
#include "store/store.h"

namespace parity::serve {

struct ServeOptions {
  std::string db;                  ///< the results store
  std::vector<std::string> roots;  ///< directories whose reports and dumps are served
  std::string host = "127.0.0.1";
  int port = 8470;
  std::string token;  ///< "" : no token (loopback only)
  /// Further names a request's Host may give (with a token only): the names the server is
  /// reached by when it listens on 0.0.0.0 or ::.
  std::vector<std::string> allow_hosts;
  std::size_t cache_entries = 8;  ///< per cache (compare, explain)
  int head_timeout_ms = 10000;    ///< each request's head must arrive within this
  int poll_ms = 2000;             ///< how often the runs page polls for new runs
};

/// An answer of the JSON API.
struct Answer {
  int status = 200;
  Json body;
};

/// {"format":"parity-serve-error","version":1,"status":N,"error":MESSAGE}.
Answer ErrorAnswer(int status, std::string_view message);

/// A bounded map from key to shared value, least recently used evicted first; thread-safe.
template <typename T>
class Cache {
 public:
  explicit Cache(std::size_t capacity) : capacity_(capacity) {}
  std::shared_ptr<const T> Get(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != key) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    return nullptr;
  }
  void Put(const std::string& key, std::shared_ptr<const T> value) {
    std::lock_guard lock(mutex_);
    entries_.remove_if([&key](const auto& e) { return e.first == key; });
    entries_.emplace_front(key, std::move(value));
    while (entries_.size() > capacity_) entries_.pop_back();
  }
  std::size_t size() {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const T>>> entries_;
};

/// The state the handlers share; safe to use from the server's threads.
struct Context {
  explicit Context(ServeOptions opts)
      : options(std::move(opts)),
        compare_cache(options.cache_entries),
        explain_cache(options.cache_entries) {}

  /// The calling thread's read-only connection to the store, opened on first use and kept
  /// (a Store is not shared between threads; a kept one keeps its page cache).
  Result<store::Store*> OpenStore() const;

  const ServeOptions options;
  Cache<Json> compare_cache;
  Cache<ExplainReport> explain_cache;
  /// Held while a compare or explain is computed, so that two requests for one answer
  /// compute it once and a burst of them does not take every core.
  std::mutex compute_mutex;
};

}  // namespace parity::serve

#endif  // PARITY_SERVE_CONTEXT_H_
