// Handlers of locks (docs/placement.md, "Locks"): Lock waits, parked, until
// granted or its timeout; Unlock; a connection that closes releases its
// locks (connection_closed calls release_locks).
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

#include <algorithm>
#include <cstdint>

namespace cove::server {

namespace {

std::uint64_t holder_of(const Session& s) { return reinterpret_cast<std::uintptr_t>(&s); }

}  // namespace

// Waits for its deadline only: a grant answers it through lock_waiters_.
class Service::LockWait final : public ParkedRequest {
 public:
  LockWait(Service& service, std::uint64_t id, std::string label, net::Deadline until)
      : ParkedRequest("l:", until), service_(service), id_(id), label_(std::move(label)) {}
  bool retry(store::Store::Freed&) override { return !service_.lock_waiters_.count(id_); }
  void expire() override {
    auto it = service_.lock_waiters_.find(id_);
    if (it == service_.lock_waiters_.end()) return;  // granted, or its holder went
    Responder answer = std::move(it->second);
    service_.lock_waiters_.erase(it);
    store::LockOutcome out;
    service_.locks_.cancel(id_, out);
    service_.answer_locks(out);
    answer.fail(Code::Timeout, "lock on " + label_ + " was not granted before the timeout");
  }
  void cancel() override {
    auto it = service_.lock_waiters_.find(id_);
    if (it == service_.lock_waiters_.end()) return;
    it->second.fail(Code::Unavailable, "the server is shutting down");
    service_.lock_waiters_.erase(it);
  }

 private:
  Service& service_;
  std::uint64_t id_;
  std::string label_;
};

void Service::answer_locks(const store::LockOutcome& outcome) {
  for (const std::uint64_t id : outcome.granted) {
    auto it = lock_waiters_.find(id);
    if (it == lock_waiters_.end()) continue;
    it->second.reply<net::Message<net::Op::Lock>>({});
    lock_waiters_.erase(it);
  }
  for (const std::uint64_t id : outcome.dropped) lock_waiters_.erase(id);
}

void Service::lock(Session& s, net::LockRequest&& r, Responder answer) {
  store::LockRequest q{0, holder_of(s), r.name, {r.start, r.count}, r.write ? store::LockMode::write : store::LockMode::read, 0};
  const std::string label = store::lock_label(r.name, q.region);
  if (r.timeout_ms < 0) detail::fail(Code::InvalidArgument, "lock on ", label, ": timeout ", r.timeout_ms, " ms is negative");
  store::Store::Freed freed;  // nothing, but retry wants one
  std::lock_guard lock(mutex);
  if (const store::VariableDef* def = store_.find(r.name); def && def->shape) {
    locks_.set_domain(r.name, {def->shape->hi.begin(), def->shape->hi.begin() + def->shape->ndim});
  }
  q.id = next_lock_++;
  const std::uint64_t id = q.id;
  const store::LockOutcome out = locks_.lock(std::move(q));
  answer_locks(out);
  parked_->retry("l:", freed);  // waits answered by a grant leave
  if (std::find(out.granted.begin(), out.granted.end(), id) != out.granted.end()) {
    answer.reply<net::Message<net::Op::Lock>>({});
    return;
  }
  if (r.timeout_ms == 0) {
    store::LockOutcome behind;
    locks_.cancel(id, behind);
    answer_locks(behind);
    detail::fail(Code::Timeout, "lock on ", label, " is held by another client");
  }
  lock_waiters_.emplace(id, std::move(answer));
  parked_->park(std::make_unique<LockWait>(*this, id, label, net::deadline_in(r.timeout_ms)));
}

net::Empty Service::unlock(Session& s, net::UnlockRequest&& r) {
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  answer_locks(locks_.unlock(holder_of(s), r.name, {r.start, r.count}));
  parked_->retry("l:", freed);
  return {};
}

void Service::release_locks(Session& s) {
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  const store::LockOutcome out = locks_.release_holder(holder_of(s));
  if (!out.granted.empty() || !out.dropped.empty())
    log::info("a connection closed: its locks went, {} waiting lock(s) granted", out.granted.size());
  answer_locks(out);
  parked_->retry("l:", freed);
}

}  // namespace cove::server
