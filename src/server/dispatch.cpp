#include "server/dispatch.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <unistd.h>

namespace cove::server {

using detail::fail;

void Responder::send(net::Bytes message) {
  if (done_->exchange(true)) return;
  if (answered_) ++*answered_;
  request_->reply(std::move(message));
}

void Responder::fail(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    fail(e.code(), detail::message_of(e));
  } catch (const std::bad_alloc&) {
    fail(Code::NoMemory, "the server ran out of memory handling this request");
  } catch (const std::exception& e) {
    log::error("{} request {} failed unexpectedly: {}", type_, id_, e.what());
    fail(Code::Internal, e.what());
  }
}

void Dispatcher::add(net::Op op, RunsInline runs_inline, Handler handler) {
  const auto type = static_cast<std::size_t>(op);
  if (type >= table_.size() || table_[type].handler)
    fail(Code::Internal, "handler for ", net::op_name(op), " registered twice or out of range");
  table_[type] = {std::move(runs_inline), std::move(handler)};
}

void Dispatcher::start() {
  for (std::size_t type = 1; type < table_.size(); ++type)
    if (!table_[type].handler) fail(Code::Internal, "no handler for request type ", type);
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { work(); });
}

namespace {
// Per thread: how many run()s it is in, by dispatcher (a handler may reach
// another server of this process, whose dispatcher runs on this thread too).
thread_local std::map<const Dispatcher*, int> running_here;
}  // namespace

void Dispatcher::stop() {
  {
    std::unique_lock lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    queue_.clear();
    wake_.notify_all();
    const auto it = running_here.find(this);
    const int mine = it == running_here.end() ? 0 : it->second;
    idle_.wait(lock, [&] { return running_ == mine; });
  }
  for (auto& t : threads_)
    if (t.get_id() != std::this_thread::get_id()) t.join();
    else t.detach();  // a handler stopping the server from a worker
}

bool Dispatcher::is_worker(std::thread::id id) const {
  for (const auto& t : threads_)
    if (t.get_id() == id) return true;
  return false;
}

namespace {

// COVE_RECORD_REQUESTS=DIR: every request this process's servers receive is
// written to DIR, one file each (the first 10^4), named by its type: real
// traffic to seed the fuzzers' corpora (fuzz/make_corpus.sh).
void record(std::span<const std::byte> message) {
  static const char* dir = std::getenv("COVE_RECORD_REQUESTS");
  static std::atomic<int> count{0};
  if (!dir || !*dir) return;
  const int n = count++;
  if (n >= 10000) return;
  std::string name = "unknown";
  try {
    if (const auto* info = net::op_info(net::read_header(message).type)) name = info->name;
  } catch (const Error&) {
  }
  const std::string path = std::string(dir) + "/" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(n);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, message.data(), message.size());
  ::close(fd);
}

}  // namespace

void Dispatcher::deliver(std::shared_ptr<net::Request> request) {
  record(request->message());
  bool inline_now = true;  // malformed and unknown requests are refused at once
  try {
    const net::Header h = net::read_header(request->message());
    if (h.type < table_.size() && table_[h.type].handler) inline_now = table_[h.type].runs_inline();
  } catch (const Error&) {
  }
  if (inline_now) {
    run(request);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;  // dropping it fails the caller
    queue_.push_back(std::move(request));
  }
  wake_.notify_one();
}

void Dispatcher::work() {
  for (;;) {
    std::shared_ptr<net::Request> r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    run(r);
  }
}

void Dispatcher::run(const std::shared_ptr<net::Request>& request) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;  // dropping it fails the caller
    ++running_;
  }
  ++running_here[this];
  struct Done {
    Dispatcher& d;
    ~Done() {
      if (--running_here[&d] == 0) running_here.erase(&d);
      std::lock_guard lock(d.mutex_);
      --d.running_;
      d.idle_.notify_all();
    }
  } done{*this};
  handle(request);
}

void Dispatcher::handle(const std::shared_ptr<net::Request>& request) {
  net::Header h;
  try {
    h = net::read_header(request->message());
  } catch (const Error& e) {
    // Not even a header: answer with what can be said (type and id 0).
    Responder(request, h, &answered_).fail(e.code(), detail::message_of(e));
    return;
  }
  Responder answer(request, h, &answered_);
  try {
    const net::OpInfo* info = net::op_info(h.type);
    if (!info || !table_[h.type].handler) fail(Code::Protocol, "unknown request type ", h.type);
    auto session = session_of(request->peer());
    if (info->sender != net::Sender::Anyone) {
      net::check_version(h);
      if (!session->is_greeted())
        fail(Code::Protocol, "a ", info->name, " request before hello: every connection starts with a hello");
      if (info->sender == net::Sender::Server && !session->is_member())
        fail(Code::PermissionDenied, info->name, " is a message between the servers of a group; this connection is ",
             "not one of them");
      if (info->sender == net::Sender::Client && !session->is_proven())
        fail(Code::PermissionDenied, "a ", info->name, " request from a connection that has not proved it holds ",
             "the group's secret (a client finds it in the group's connection file; see docs/security.md)");
    }
    table_[h.type].handler(*session, *request, answer);
  } catch (...) {
    answer.fail(std::current_exception());
  }
}

}  // namespace cove::server
