// Cove methods of the comparison benchmark:
//   cove-staged  writers put() copies into staging servers, readers get();
//   cove-direct  writers put_local() (only the index learns of the piece),
//                readers get() straight from the writers' memory.
// Servers come from COVE_CONNECT (bench/compare.py starts them).
#include "compare_methods.hpp"

#include <cove/cove.hpp>
#include <cove/mpi.hpp>

#include <optional>

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

  void write(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks) {
      if (direct_) client_->put_local(name(ctx, *b.var), step + 1, b.box, b.data, b.bytes);
      else client_->put(name(ctx, *b.var), step + 1, b.box, b.data, b.bytes);
    }
  }

  void read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    for (auto& b : blocks) client_->get(name(ctx, *b.var), step + 1, b.box, b.data, b.bytes, 120000);
  }

  void after_read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    if (ctx.role != Role::Writer) return;
    for (auto& b : blocks) {
      if (direct_) client_->release(name(ctx, *b.var), step + 1, b.box);
    }
    // Staged: the servers keep --max-versions of each variable.
  }

  void finish(Context& ctx) override {
    quiet_barrier(ctx.world);
    client_.reset();
  }

 private:
  static std::string name(const Context& ctx, const Variable& v) { return ctx.run_id + "/" + v.name; }

  bool direct_;
  std::optional<Client> client_;
};

}  // namespace

std::unique_ptr<Method> make_cove_method(bool direct) { return std::make_unique<CoveMethod>(direct); }

}  // namespace cove::bench
