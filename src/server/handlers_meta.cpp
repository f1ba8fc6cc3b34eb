// Handlers of metadata: MetaPut, and MetaGet (parked until its version
// exists; LatestIfAny never parks).
#include "core/fail.hpp"
#include "server/service.hpp"

namespace cove::server {

namespace {

class MetaWait final : public ParkedRequest {
 public:
  MetaWait(std::string key, const store::MetadataStore& store, net::MetaGetRequest q, Responder answer,
           net::Deadline until)
      : ParkedRequest(std::move(key), until), store_(store), q_(std::move(q)), answer_(std::move(answer)) {}

  // Answers if the store has the version asked for.
  bool answer_if_there() {
    const auto found = store_.find(q_.name, q_.mode, q_.version);
    if (!found) return false;
    answer_.reply<net::Message<net::Op::MetaGet>>({true, found->first, *found->second});
    return true;
  }
  // Answers that the name has no version (LatestIfAny).
  void answer_none() { answer_.reply<net::Message<net::Op::MetaGet>>({false, 0, {}}); }
  bool retry(store::Store::Freed&) override { return answer_if_there(); }
  void expire() override {
    answer_.fail(Code::Timeout, detail::concat("metadata '", q_.name, "' had no such version before the timeout"));
  }
  void cancel() override { answer_.fail(Code::Unavailable, "the server is shutting down"); }

 private:
  const store::MetadataStore& store_;
  net::MetaGetRequest q_;
  Responder answer_;
};

}  // namespace

// MetaPut: counted against the memory budget like data (NoMemory, and
// nothing changes, when it does not fit).
net::Empty Service::meta_put(net::MetaPutRequest&& r) {
  store::Store::Freed freed;  // replicas dropped to make room: released after the lock
  std::lock_guard lock(mutex);
  const std::uint64_t need = store::MetadataStore::cost(r.name, r.data.size());
  store_.reserve(need, freed);
  try {
    metadata_.put(r.name, r.version, r.data);
  } catch (...) {
    store_.unreserve(need);
    throw;
  }
  store_.unreserve(need);
  store_.set_metadata_bytes(metadata_.bytes());
  parked_->retry(meta_key(r.name), freed);
  return {};
}

void Service::meta_get(net::MetaGetRequest&& r, Responder answer) {
  const net::Deadline deadline = net::deadline_in(r.timeout_ms);
  const bool now_only = r.timeout_ms == 0;
  const bool if_any = r.mode == net::MetaMode::LatestIfAny;  // never waits; none is not an error
  std::string key = meta_key(r.name), name = r.name;
  std::lock_guard lock(mutex);
  auto wait = std::make_unique<MetaWait>(std::move(key), metadata_, std::move(r), std::move(answer), deadline);
  if (wait->answer_if_there()) return;
  if (if_any) return wait->answer_none();
  if (now_only) detail::fail(Code::NotFound, "metadata '", name, "' has no such version (yet)");
  parked_->park(std::move(wait));
}

}  // namespace cove::server
