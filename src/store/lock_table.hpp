// Internal: the lock manager's table on one server (seeds/001, section
// III-D; docs/placement.md, "Locks").
//
// A lock covers a named object, or a region (start, count) of it; an empty
// region is the whole object. Two locks conflict when they name the same
// object, their regions overlap, and one of them is a write lock: readers
// share, a writer is alone. Requests that cannot be granted wait in FIFO
// order: a request is granted when it conflicts with no holder and with no
// request that waited before it, so a writer is never starved by readers
// arriving after it. Every wait has a deadline; expire() ends the waits
// past it. A holder that goes away (release_holder) loses its locks and its
// waiting requests, and whoever waited on them goes on.
//
// Which server keeps an object's locks: lock_home() hashes the object's
// name, so that every region of one object meets in one table and overlap
// is decided there (hashing each region would let two overlapping regions
// be locked on two servers at once).
//
// Thread-safety: none; the server serialises access. No I/O, no clock: the
// caller passes times (seconds on any one clock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace cove::store {

enum class LockMode { read, write };

struct LockRegion {
  std::vector<std::uint64_t> start;  // empty: the whole object
  std::vector<std::uint64_t> count;
};

struct LockRequest {
  std::uint64_t id = 0;      // unique per table, chosen by the caller
  std::uint64_t holder = 0;  // the client (session) asking
  std::string name;
  LockRegion region;
  LockMode mode = LockMode::read;
  double deadline = 0;       // the wait ends at this time
};

struct LockOutcome {
  std::vector<std::uint64_t> granted;    // request ids now holding their lock
  std::vector<std::uint64_t> timed_out;  // request ids whose wait ended unanswered
  std::vector<std::uint64_t> dropped;    // waits of a holder that went away
};

class LockTable {
 public:
  // One client holds and waits for at most this many locks in one table
  // (hardening: a client cannot grow a server's table without bound).
  static constexpr std::size_t kDefaultPerHolder = 4096;
  explicit LockTable(std::size_t max_per_holder = kDefaultPerHolder) : max_per_holder_(max_per_holder) {}

  // The extent of `name` (its global dimensions): regions outside it are
  // refused. Objects without one accept any region.
  void set_domain(const std::string& name, std::vector<std::uint64_t> dims);

  // Grants now (outcome.granted holds the id) or queues the request. Throws
  // Error(InvalidArgument) naming the object for a region outside its
  // domain, start and count of different ranks, a zero count, or a
  // duplicate request id; Error(AlreadyExists) when the holder already
  // holds or waits for a lock on that very region; Error(NoMemory) naming
  // the object and the limit when the holder already has max_per_holder
  // locks held or waited for here.
  LockOutcome lock(LockRequest request);

  // The holder's lock on exactly that region of name ends. Throws
  // Error(NotFound) naming the object when nobody holds it, and
  // Error(PermissionDenied) naming the object and the holder when another
  // client holds it.
  LockOutcome unlock(std::uint64_t holder, const std::string& name, const LockRegion& region);

  // The holder went away: its locks end and its waits are dropped.
  LockOutcome release_holder(std::uint64_t holder);

  // Waits whose deadline is <= now end (timed_out); others may be granted
  // behind them.
  LockOutcome expire(double now);

  // The waiting request `id` ends (its caller stopped waiting); false when
  // it is not waiting (granted, or never seen). Others may be granted behind it.
  bool cancel(std::uint64_t id, LockOutcome& out);

  std::size_t held(const std::string& name) const;
  std::size_t waiting(const std::string& name) const;
  // Locks `holder` holds or waits for in this table.
  std::size_t of_holder(std::uint64_t holder) const;

 private:
  struct Object {
    std::vector<LockRequest> holders;
    std::deque<LockRequest> queue;
  };
  void grant_waiting(Object& object, LockOutcome& out);
  void forget_one(std::uint64_t holder);
  std::size_t max_per_holder_;
  std::map<std::uint64_t, std::size_t> per_holder_;  // held + waiting, per holder
  std::map<std::string, Object> objects_;
  std::map<std::string, std::vector<std::uint64_t>> domains_;
};

// The server (0..servers-1) that keeps the locks of `name`.
int lock_home(const std::string& name, int servers) noexcept;

// "name" or "name[start=(0,4) count=(2,2)]", for messages.
std::string lock_label(const std::string& name, const LockRegion& region);

}  // namespace cove::store
