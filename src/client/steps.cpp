// Steps: a reader's walk over the complete versions of a stream of one or
// several variables, and a writer's end of the stream (docs/staging.md,
// "Steps"). Built on the oldest- and newest-covering-version queries; the
// end of a stream is the metadata "cove.end/<var>".
#include "client/impl.hpp"

#include "core/fail.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

namespace cove {

using detail::fail;

namespace {

std::string end_name(const std::string& var) { return "cove.end/" + var; }

// How often a reader that waits for a step looks for the end of the
// stream (a step itself is answered as soon as it is complete).
constexpr std::int64_t kEndPollMs = 200;

// Milliseconds left before `deadline`, rounded up, at least 1.
std::int64_t left_ms(net::Deadline deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - net::Clock::now()).count();
  return std::max<std::int64_t>(1, left);
}

}  // namespace

struct Steps::State {
  std::shared_ptr<Client::Impl> impl;
  std::vector<std::string> vars;
  std::vector<Box> regions;  // given, or the variables' shapes once known
  StepOptions options;
  std::vector<std::optional<Client::Impl::VarInfo>> infos;
  std::optional<std::uint64_t> current;
  bool ended = false;

  // The newest step the writers' end_steps allow: the least `last` over the
  // variables whose stream has ended (no step after it can be complete).
  std::optional<std::uint64_t> end() {
    std::optional<std::uint64_t> last;
    for (const auto& var : vars)
      if (const auto m = impl->meta_get(end_name(var), net::MetaMode::LatestIfAny, 0, 0))
        last = last ? std::min(*last, m->version) : m->version;
    return last;
  }

  // Definitions and regions, waited for within the deadline.
  void resolve(std::int64_t timeout_ms, net::Deadline deadline) {
    for (std::size_t i = 0; i < vars.size(); ++i) {
      if (infos[i]) continue;
      const std::int64_t left = timeout_ms <= 0 ? timeout_ms : left_ms(deadline);
      Client::Impl::VarInfo info = impl->var_info(vars[i], left);
      if (regions.size() < vars.size()) {
        if (!info.shape)
          fail(Code::InvalidArgument, "steps: variable '", vars[i],
               "' was defined without a shape; give steps() a region for each variable");
        regions.push_back(*info.shape);
      }
      Client::Impl::check_region(vars[i], info, regions[i]);
      infos[i] = std::move(info);
    }
  }

  // Whether every variable covers exactly `version` now.
  bool all_cover(std::uint64_t version) {
    Client::Impl::Leases leases(*impl);
    for (std::size_t i = 0; i < vars.size(); ++i) try {
        impl->gather(vars[i], version, false, regions[i], 0, infos[i]->dtype, leases);
      } catch (const Error& e) {
        if (e.code() != Code::NotFound) throw;
        return false;
      }
    return true;
  }

  // A complete step at or after `from`, waiting up to wait_ms (0: now):
  // the oldest such, or with `newest` the newest.
  std::optional<std::uint64_t> find(std::uint64_t from, std::int64_t wait_ms, bool newest) {
    const net::Deadline deadline = net::deadline_in(wait_ms);
    std::uint64_t candidate = from;
    for (;;) {
      std::vector<std::uint64_t> found;
      {
        Client::Impl::Leases leases(*impl);
        for (std::size_t i = 0; i < vars.size(); ++i) try {
            const std::int64_t left = wait_ms <= 0 ? 0 : left_ms(deadline);
            found.push_back(impl->gather(vars[i], candidate, true, regions[i], left, infos[i]->dtype, leases,
                                         Layout::c(), !newest)
                                .version);
          } catch (const Error& e) {
            if (e.code() == Code::NotFound || e.code() == Code::Timeout) return std::nullopt;
            throw;
          }
      }
      if (found.size() == 1) return found.front();
      // Oldest: the newest of the variables' oldest steps, if all cover it;
      // else those that do not answer a newer one in the next round. Newest:
      // the oldest of their newest, if all cover it; else the oldest
      // complete step.
      const std::uint64_t v =
          newest ? *std::min_element(found.begin(), found.end()) : *std::max_element(found.begin(), found.end());
      if (all_cover(v)) return v;
      if (newest) return find(from, wait_ms <= 0 ? 0 : left_ms(deadline), false);
      if (wait_ms > 0 && net::Clock::now() >= deadline) return std::nullopt;
      candidate = v;
    }
  }
};

std::optional<std::uint64_t> Steps::next(std::int64_t timeout_ms) {
  State& st = *state_;
  if (st.ended) return std::nullopt;
  const net::Deadline deadline = net::deadline_in(timeout_ms);
  st.resolve(timeout_ms, deadline);
  std::uint64_t from = 0;
  if (st.current) {
    if (*st.current > std::numeric_limits<std::uint64_t>::max() - st.options.stride) {
      st.ended = true;  // no version number is left after it
      return std::nullopt;
    }
    from = *st.current + st.options.stride;
  } else if (st.options.after) {
    if (*st.options.after == std::numeric_limits<std::uint64_t>::max()) {
      st.ended = true;
      return std::nullopt;
    }
    from = *st.options.after + 1;
  }
  for (;;) {
    // The end first: every step it counts was complete when it was written,
    // so a look for steps after reading it sees them all.
    const std::optional<std::uint64_t> end = st.end();
    std::int64_t slice = 0;
    if (!end && timeout_ms != 0)
      slice = timeout_ms < 0 ? kEndPollMs : std::min(left_ms(deadline), kEndPollMs);
    const std::optional<std::uint64_t> v = st.find(from, slice, st.options.newest);
    if (v && (!end || *v <= *end)) {
      st.current = v;
      return v;
    }
    if (end) {
      st.ended = true;
      return std::nullopt;
    }
    if (timeout_ms == 0)
      fail(Code::NotFound, "steps of '", st.vars.front(), "'", st.vars.size() > 1 ? " and the others" : "",
           ": no complete step at or after version ", from, " yet");
    if (timeout_ms > 0 && net::Clock::now() >= deadline)
      fail(Code::Timeout, "steps of '", st.vars.front(), "'", st.vars.size() > 1 ? " and the others" : "",
           ": no complete step at or after version ", from, " within ", timeout_ms, " ms");
  }
}

std::optional<std::uint64_t> Steps::current() const { return state_->current; }

Steps Client::steps(std::vector<std::string> vars, std::vector<Box> regions, const StepOptions& options) {
  if (vars.empty()) fail(Code::InvalidArgument, "steps: give at least one variable");
  if (options.stride == 0) fail(Code::InvalidArgument, "steps: stride 0 (it is 1 or more)");
  if (!regions.empty() && regions.size() != vars.size())
    fail(Code::InvalidArgument, "steps: ", regions.size(), " regions for ", vars.size(),
         " variables (one per variable, or none for their whole shapes)");
  for (std::size_t i = 0; i < vars.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (vars[i] == vars[j]) fail(Code::InvalidArgument, "steps: variable '", vars[i], "' is named twice");
  Steps s;
  const std::size_t n = vars.size();
  s.state_ = std::make_shared<Steps::State>(
      Steps::State{impl_, std::move(vars), std::move(regions), options, std::vector<std::optional<Impl::VarInfo>>(n), {}, false});
  return s;
}

void Client::end_steps(std::span<const std::string> vars, std::optional<std::uint64_t> last) {
  if (vars.empty()) fail(Code::InvalidArgument, "end_steps: give at least one variable");
  for (const auto& var : vars) {
    std::uint64_t v = 0;
    if (last) {
      v = *last;
    } else {
      const std::optional<std::uint64_t> newest = this->latest(var);
      if (!newest) fail(Code::NotFound, "end_steps: variable '", var, "' has no version; give the last step");
      v = *newest;
    }
    put_meta(end_name(var), v, {});
  }
}

}  // namespace cove
