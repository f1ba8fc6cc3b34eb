// Internal: logging of dropped connections, at most once per second per
// peer address, so that a peer sending garbage or opening thousands of
// connections cannot flood the log (or slow the thread that drops it).
//
// Thread-safety: may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

namespace cove::net {

class DropLog {
 public:
  // Whether a drop of a connection from `peer` may be logged now; if so,
  // the next one from the same address waits a second. Also counts the
  // drops not logged, returned (and reset) by the next one that is.
  bool admit(const std::string& peer, std::size_t& suppressed) {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (last_.size() > kMaxPeers) prune(now);
    auto [it, fresh] = last_.try_emplace(peer, Entry{now, 0});
    if (!fresh && now - it->second.at < std::chrono::seconds(1)) {
      ++it->second.suppressed;
      return false;
    }
    suppressed = fresh ? 0 : it->second.suppressed;
    it->second = Entry{now, 0};
    return true;
  }

 private:
  static constexpr std::size_t kMaxPeers = 4096;
  struct Entry {
    std::chrono::steady_clock::time_point at;
    std::size_t suppressed;
  };
  // Forgets addresses not heard from for a second (their next drop is
  // logged anyway); with more than kMaxPeers busy ones, forgets them all.
  void prune(std::chrono::steady_clock::time_point now) {
    for (auto it = last_.begin(); it != last_.end();)
      it = now - it->second.at >= std::chrono::seconds(1) ? last_.erase(it) : std::next(it);
    if (last_.size() > kMaxPeers) last_.clear();
  }
  std::mutex mutex_;
  std::map<std::string, Entry> last_;
};

}  // namespace cove::net
