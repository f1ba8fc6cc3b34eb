// Cove methods of the comparison benchmark:
//   cove-staged  writers put() copies into staging servers, readers get();
//   cove-direct  writers put_local() (only the index learns of the piece)
//                from memory of Client::allocate(), readers get() straight
//                from the writers' memory (one memcpy from a mapping).
// Servers come from COVE_CONNECT (bench/compare.py starts them).
// --opt chunks=N (an experiment, default 1): every block is cut into N
// slabs along its first axis, put and got by N threads at once; this
// measures what copying in parallel would gain (see docs/bench-compare.md).
#include "compare_methods.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace cove::bench {

namespace {

class CoveMethod final : public Method {
 public:
  explicit CoveMethod(bool direct) : direct_(direct) {}

  void setup(Context& ctx) override {
    client_.emplace(cove::connect(ctx.world));
    for (const auto& v : ctx.cs.vars)
      client_->define(name(ctx, v), DType::parse(elem_name(v.elem)), static_cast<int>(v.shape.size()), v.shape);
  }

  void place(Context& ctx, std::vector<Block>& blocks) override {
    if (!direct_ || ctx.role != Role::Writer) return;
    for (auto& b : blocks) {
      cove::SharedBuffer m = client_->allocate(b.bytes);
      std::memcpy(m.data(), b.data, b.bytes);
      b.data = m.data();
      shared_.push_back(std::move(m));
    }
  }

  void write(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks)
      in_chunks(ctx, b, [&](const Box& box, void* data, std::size_t bytes) {
        if (direct_) client_->put_local(name(ctx, *b.var), step + 1, box, data, bytes);
        else client_->put(name(ctx, *b.var), step + 1, box, data, bytes);
      });
  }

  void read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks)
      in_chunks(ctx, b, [&](const Box& box, void* data, std::size_t bytes) {
        client_->get(name(ctx, *b.var), step + 1, box, data, bytes, 120000);
      });
  }

  void after_read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    if (ctx.role != Role::Writer || !direct_) return;  // staged: the servers keep --max-versions
    for (auto& b : blocks)
      in_chunks(ctx, b, [&](const Box& box, void*, std::size_t) { client_->release(name(ctx, *b.var), step + 1, box); });
  }

  void finish(Context& ctx) override {
    quiet_barrier(ctx.world);
    shared_.clear();
    client_.reset();
  }

 private:
  static std::string name(const Context& ctx, const Variable& v) { return ctx.run_id + "/" + v.name; }

  // Calls fn on the whole block, or on --opt chunks=N slabs of it (along its
  // first axis, contiguous in C order) from N threads at once.
  template <class Fn>
  static void in_chunks(const Context& ctx, Block& b, Fn&& fn) {
    const auto it = ctx.options.find("chunks");
    const Index n = std::min<Index>(it == ctx.options.end() ? 1 : std::stoll(it->second), b.box.count(0));
    if (n <= 1) return fn(b.box, b.data, b.bytes);
    std::vector<Index> f(static_cast<std::size_t>(b.box.ndim), 1);
    f[0] = n;
    const std::vector<Box> parts = split_grid(b.box, f);
    const std::size_t row = b.bytes / static_cast<std::size_t>(b.box.count(0));
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::size_t off = static_cast<std::size_t>(parts[i].lo[0] - b.box.lo[0]) * row;
      threads.emplace_back([&, i, off] {
        try {
          fn(parts[i], static_cast<char*>(b.data) + off, static_cast<std::size_t>(parts[i].count(0)) * row);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  bool direct_;
  std::vector<cove::SharedBuffer> shared_;  // cove-direct writers' blocks
  std::optional<Client> client_;
};

}  // namespace

std::unique_ptr<Method> make_cove_method(bool direct) { return std::make_unique<CoveMethod>(direct); }

}  // namespace cove::bench
