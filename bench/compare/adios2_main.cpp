// cove-compare-adios2: the ADIOS2 SST baseline of the comparison benchmark
// (method adios2-sst). The writer opens an SST stream, declares each
// variable with its global shape and its piece, and per step puts its
// pieces between BeginStep and EndStep; each reader opens the stream (the
// kokkos case has two readers of one stream), selects its region and gets
// it. The ADIOS2 wheel from PyPI is built without MPI, so this runs only
// with one writer process and one process per reader (1->1, 1->1+1); other
// counts are reported as skipped. Data go over SST's default data plane.
// Built only when CMake finds ADIOS2 (scripts/setup-bench.sh installs it).
// Usage as cove-compare (bench/compare/compare_main.cpp); --opt
// sst-params=Key=Value;Key=Value passes engine parameters.
#include "exchange_runner.hpp"

#include <adios2.h>

#include <memory>
#include <sstream>

namespace cove::bench {

namespace {

class Adios2Sst final : public Method {
 public:
  void setup(Context& ctx) override {
    bool one_each = ctx.cs.writers == 1;
    for (int n : ctx.cs.readers) one_each = one_each && n == 1;
    if (!one_each)
      throw Skip("ADIOS2 from the adios2 wheel is built without MPI: SST runs with one writer and one process per reader only");
    adios_ = std::make_unique<adios2::ADIOS>();
    io_ = adios_->DeclareIO(ctx.role == Role::Writer ? "writer" : "reader");
    io_.SetEngine("SST");
    adios2::Params params;
    if (ctx.role == Role::Writer) params["RendezvousReaderCount"] = std::to_string(ctx.cs.readers.size());
    if (auto it = ctx.options.find("sst-params"); it != ctx.options.end()) {
      std::stringstream ss(it->second);
      std::string kv;
      while (std::getline(ss, kv, ';')) {
        const auto eq = kv.find('=');
        if (eq != std::string::npos) params[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }
    io_.SetParameters(params);
    const std::string stream = ctx.dir + "/" + ctx.run_id;
    if (ctx.role == Role::Writer) {
      for (const auto& v : ctx.cs.vars) define(v, ctx.my_box(v));
      engine_ = io_.Open(stream, adios2::Mode::Write);
    } else {
      engine_ = io_.Open(stream, adios2::Mode::Read);
    }
  }

  void write(Context&, std::uint64_t, std::vector<Block>& blocks) override {
    engine_.BeginStep();
    for (auto& b : blocks) {
      switch (b.var->elem) {
        case Elem::U64: engine_.Put(io_.InquireVariable<std::uint64_t>(b.var->name), static_cast<const std::uint64_t*>(b.data)); break;
        case Elem::F32: engine_.Put(io_.InquireVariable<float>(b.var->name), static_cast<const float*>(b.data)); break;
        case Elem::F64: engine_.Put(io_.InquireVariable<double>(b.var->name), static_cast<const double*>(b.data)); break;
      }
    }
    engine_.EndStep();
  }

  void read(Context&, std::uint64_t step, std::vector<Block>& blocks) override {
    if (engine_.BeginStep(adios2::StepMode::Read, 120.0f) != adios2::StepStatus::OK)
      throw std::runtime_error("SST: step " + std::to_string(step) + " did not arrive");
    for (auto& b : blocks) {
      switch (b.var->elem) {
        case Elem::U64: get<std::uint64_t>(b); break;
        case Elem::F32: get<float>(b); break;
        case Elem::F64: get<double>(b); break;
      }
    }
    engine_.EndStep();
  }

  void finish(Context&) override {
    if (engine_) engine_.Close();
  }

 private:
  static adios2::Dims dims(const std::vector<Index>& v) { return adios2::Dims(v.begin(), v.end()); }

  void define(const Variable& v, const Box& b) {
    const auto shape = dims(v.shape), start = dims(b.start()), count = dims(b.count());
    switch (v.elem) {
      case Elem::U64: io_.DefineVariable<std::uint64_t>(v.name, shape, start, count, true); break;
      case Elem::F32: io_.DefineVariable<float>(v.name, shape, start, count, true); break;
      case Elem::F64: io_.DefineVariable<double>(v.name, shape, start, count, true); break;
    }
  }

  template <class T>
  void get(Block& b) {
    auto var = io_.InquireVariable<T>(b.var->name);
    if (!var) throw std::runtime_error("SST: no variable " + b.var->name);
    var.SetSelection({dims(b.box.start()), dims(b.box.count())});
    engine_.Get(var, static_cast<T*>(b.data));
  }

  std::unique_ptr<adios2::ADIOS> adios_;
  adios2::IO io_;
  adios2::Engine engine_;
};

}  // namespace

}  // namespace cove::bench

int main(int argc, char** argv) {
  using namespace cove::bench;
  return run_exchange(argc, argv, {"adios2-sst"},
                      [](const std::string&) -> std::unique_ptr<Method> { return std::make_unique<Adios2Sst>(); });
}
