// Handlers of what a variable and its versions promise readers
// (docs/staging.md, "What a version promises"): Lookup (a definition,
// waited for by readers that come first), Seal (a version is complete) and
// Derive (versions that start as others).
#include "common/log.hpp"
#include "core/fail.hpp"
#include "server/service.hpp"

namespace cove::server {

using detail::fail;
using net::Op;

namespace {

net::LookupReply definition_of(const store::VariableDef& def) {
  return {def.dtype, def.ndim, def.shape, net::Bytes(def.fill.begin(), def.fill.end())};
}

}  // namespace

// A lookup waiting for its variable to be defined.
class Service::LookupWait final : public ParkedRequest {
 public:
  LookupWait(Service& service, std::string var, Responder answer, net::Deadline until)
      : ParkedRequest(var_key(var), until), service_(service), var_(std::move(var)), answer_(std::move(answer)) {}

  bool retry(store::Store::Freed&) override {
    const store::VariableDef* def = service_.store_.find(var_);
    if (!def) return false;
    answer_.reply<net::Message<Op::Lookup>>(definition_of(*def));
    return true;
  }
  void expire() override {
    answer_.fail(Code::Timeout, detail::concat("variable '", var_, "' was not defined before the timeout"));
  }
  void cancel() override { answer_.fail(Code::Unavailable, "the server is shutting down"); }

 private:
  Service& service_;
  std::string var_;
  Responder answer_;
};

void Service::lookup(net::LookupRequest&& r, Responder answer) {
  std::lock_guard lock(mutex);
  if (const store::VariableDef* def = store_.find(r.var)) {
    answer.reply<net::Message<Op::Lookup>>(definition_of(*def));
    return;
  }
  if (r.timeout_ms == 0) fail(Code::NotFound, "variable '", r.var, "' is not defined");
  parked_->park(std::make_unique<LookupWait>(*this, std::move(r.var), std::move(answer), net::deadline_in(r.timeout_ms)));
}

net::SealReply Service::seal(net::SealRequest&& r) {
  net::SealReply out;
  {
    std::vector<std::unique_ptr<store::Piece>> evicted;  // released after the lock
    store::Store::Freed freed;
    std::lock_guard lock(mutex);
    for (const std::string& var : r.vars)  // all or nothing
      if (!store_.find(var)) fail(Code::NotFound, "variable '", var, "' is not defined");
    for (const std::string& var : r.vars) {
      out.already.push_back(store_.seal(var, r.version, evicted));
      parked_->retry(var_key(var), freed);  // gets waiting on it answer now
    }
  }
  // Then the metadata: a reader that finds it finds the variables sealed.
  if (r.then_meta) meta_put(std::move(*r.then_meta));
  return out;
}

net::VarsReply Service::derive(net::DeriveRequest&& r) {
  std::vector<std::unique_ptr<store::Piece>> evicted;
  store::Store::Freed freed;
  std::lock_guard lock(mutex);
  net::VarsReply out;
  out.pieces = static_cast<std::uint32_t>(store_.derive(r.vars, r.from, r.to, r.check_only, out.found, evicted));
  if (!r.check_only) {
    for (const std::string& var : r.vars) parked_->retry(var_key(var), freed);
    log::debug("version {} derived from {} for {} variables: {} pieces shared", r.to, r.from, r.vars.size(),
               out.pieces);
  }
  return out;
}

}  // namespace cove::server
