// White-box tests of the server's dispatcher: stopping it waits for the
// handlers that run on other threads (inline handlers run on the
// transport's thread, or in process on the caller's), since the server
// frees what they use (its memory pool, its store) right after.
#include "net/messages.hpp"
#include "server/dispatch.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace {

using cove::net::Op;

struct TestPeer final : cove::net::PeerHandle {
  std::string address() const override { return ""; }
  const char* transport() const override { return "test"; }
  bool may_claim(const std::string&) const override { return false; }
};

// A hello from one peer; `answered` tells whether it got a reply.
struct TestRequest final : cove::net::Request {
  explicit TestRequest(std::atomic<int>& answered)
      : message_(cove::net::encode_request<cove::net::Message<Op::Hello>>({}, 1)),
        peer_(std::make_shared<TestPeer>()),
        answered_(answered) {}
  std::span<const std::byte> message() const override { return message_; }
  const cove::net::Peer& peer() const override { return peer_; }
  void reply(cove::net::Bytes) override { ++answered_; }

  cove::net::Bytes message_;
  cove::net::Peer peer_;
  std::atomic<int>& answered_;
};

struct Gate {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
};

}  // namespace

TEST(Dispatcher, StopWaitsForHandlersRunningOnOtherThreads) {
  cove::server::Dispatcher d(0);
  Gate gate;
  std::atomic<bool> handler_done{false};
  d.on<Op::Hello>(cove::server::Dispatcher::always(), [&](cove::server::Session&, cove::net::HelloRequest&&) {
    gate.entered.set_value();
    gate.released.wait();
    handler_done = true;
    return cove::net::HelloReply{};
  });
  std::atomic<int> answered{0};
  std::thread caller([&] { d.deliver(std::make_shared<TestRequest>(answered)); });  // runs inline, on this thread
  gate.entered.get_future().wait();
  std::atomic<bool> done_when_stopped{false};
  std::thread stopper([&] {
    d.stop();
    done_when_stopped = handler_done.load();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // stop() would return meanwhile if it did not wait
  gate.release.set_value();
  stopper.join();
  caller.join();
  EXPECT_TRUE(done_when_stopped) << "stop() returned while a handler still ran";
  EXPECT_EQ(answered, 1);
  // After stop, requests are dropped unanswered and run no handler.
  d.deliver(std::make_shared<TestRequest>(answered));
  EXPECT_EQ(answered, 1);
}

TEST(Dispatcher, AHandlerMayStopItsOwnDispatcher) {
  cove::server::Dispatcher d(0);
  d.on<Op::Hello>(cove::server::Dispatcher::always(), [&](cove::server::Session&, cove::net::HelloRequest&&) {
    d.stop();  // waits for the other handlers, not for this one
    return cove::net::HelloReply{};
  });
  std::atomic<int> answered{0};
  d.deliver(std::make_shared<TestRequest>(answered));
  EXPECT_EQ(answered, 1);
}
