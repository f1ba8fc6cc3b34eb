// put_async and subscriptions: the client's calls that run on threads of their own.
#include "client/impl.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"

#include <future>
#include <optional>
#include <thread>

namespace cove {

using detail::fail;

// ---- non-blocking put ----

struct PutHandle::State {
  std::shared_future<void> done;
};

bool PutHandle::test() const { return state_->done.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
void PutHandle::wait() const { state_->done.get(); }

PutHandle Client::put_async(const std::string& var, std::uint64_t version, const Box& box, const void* data,
                            std::size_t bytes, const Layout& layout, MemorySpace memory) {
  PutHandle h;
  h.state_ = std::make_shared<PutHandle::State>();
  Client self = *this;  // keeps the connection alive while the put runs
  h.state_->done = std::async(std::launch::async, [self, var, version, box, data, bytes, layout, memory]() mutable {
                     self.put(var, version, box, data, bytes, layout, memory);
                   }).share();
  return h;
}

// ---- subscriptions ----

struct Subscription::State {
  std::atomic<bool> cancelled{false};
  std::thread thread;
  ~State() {
    cancelled = true;
    if (thread.joinable()) {
      if (thread.get_id() == std::this_thread::get_id())
        thread.detach();  // the last handle went away inside the callback
      else
        thread.join();
    }
  }
};

void Subscription::cancel() {
  if (!state_) return;
  state_->cancelled = true;
  if (state_->thread.joinable() && state_->thread.get_id() != std::this_thread::get_id()) state_->thread.join();
}

Subscription Client::subscribe(const std::string& var, const Box& region,
                               std::function<void(const std::string& var, std::uint64_t version)> callback) {
  if (!callback) fail(Code::InvalidArgument, "subscribe needs a callback");
  // A variable not defined yet is waited for on the subscription's thread
  // (a reader may come first): all its versions are new then.
  std::optional<Impl::VarInfo> info;
  try {
    info = impl_->var_info(var);
  } catch (const Error& e) {
    if (e.code() != Code::NotFound) throw;
  }
  // Versions already there do not count: start after the newest covering one.
  std::uint64_t next = 0;
  if (info) {
    Impl::check_region(var, *info, region);
    try {
      Impl::Leases leases(*impl_);
      next = impl_->gather(var, 0, true, region, 0, info->dtype, leases).version + 1;
    } catch (const Error& e) {
      if (e.code() != Code::NotFound) throw;
    }
  }
  Subscription sub;
  sub.state_ = std::make_shared<Subscription::State>();
  auto* state = sub.state_.get();
  auto impl = impl_;
  // The thread holds the client, not the subscription: dropping the last
  // Subscription handle cancels and joins it.
  state->thread = std::thread([state, impl, var, region, callback = std::move(callback), next, info]() mutable {
    while (!state->cancelled) {
      try {
        if (!info) {
          try {
            info = impl->var_info(var, net::kSubscriptionPollMs);
          } catch (const Error& e) {
            if (e.code() == Code::Timeout) continue;
            throw;
          }
          Impl::check_region(var, *info, region);
        }
        const DType dtype = info->dtype;
        // Short waits, so that a cancel is noticed within about this long.
        std::uint64_t v = 0;
        {
          Impl::Leases leases(*impl);
          v = impl->gather(var, next, true, region, net::kSubscriptionPollMs, dtype, leases).version;
        }
        if (state->cancelled) break;
        callback(var, v);
        next = v + 1;
      } catch (const Error& e) {
        if (e.code() == Code::Timeout) continue;
        log::warn("subscription to '{}' {} ends: {}", var, region.to_string(), e.what());
        break;
      } catch (...) {
        log::dropped("a subscription callback threw; the subscription ends");
        break;
      }
    }
  });
  return sub;
}

}  // namespace cove
