// The step loop, timing, verification and result line of the comparison
// benchmark (see exchange_runner.hpp).
#include "exchange_runner.hpp"

#include "../bench_cli.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

namespace cove::bench {

namespace {

using Clock = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double memcpy_gbps(std::size_t bytes) {
  bytes = std::min<std::size_t>(bytes, std::size_t{1} << 30);
  std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);  // touch both
  std::vector<double> t;
  const int reps = bytes >= (std::size_t{256} << 20) ? 3 : 7;
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_s();
    std::memcpy(b.data(), a.data(), bytes);
    t.push_back(now_s() - t0);
  }
  return static_cast<double>(bytes) / median(t) / 1e9;
}

struct Args {
  std::string method, role = "writer", case_name = "grid-particles", dir = ".", csv, run_id = "run";
  int writers = 1, readers = 1, steps = 3, warmup = 3;
  double size = 0;
  std::map<std::string, std::string> options;
};

// Parses on every rank; on --help or bad usage returns the exit status
// (rank 0 prints the message).
std::optional<int> parse(int argc, char** argv, int rank, const std::vector<std::string>& methods, Args& a) {
  CLI::App app{"cove-compare: one n-to-m exchange through one method, timed and verified", "cove-compare"};
  app.add_option("--method", a.method, "the method")->required()->check(CLI::IsMember(methods));
  app.add_option("--role", a.role, "this job's part (MPMD launches)")->check(CLI::IsMember({"writer", "reader", "reader2"}));
  app.add_option("--case", a.case_name, "the exchange case (exchange_case.hpp)");
  app.add_option("--writers", a.writers, "writer processes")->check(CLI::PositiveNumber);
  app.add_option("--readers", a.readers, "reader processes")->check(CLI::PositiveNumber);
  app.add_option("--steps", a.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", a.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--size", a.size, "MiB per step (0: the case's own)")->check(CLI::NonNegativeNumber);
  app.add_option("--dir", a.dir, "where file methods write");
  app.add_option("--csv", a.csv, "append the result row to this CSV file");
  app.add_option("--run-id", a.run_id, "the run's name");
  std::vector<std::string> opts;
  app.add_option("--opt", opts, "KEY[=VALUE], a method option (repeatable)")->allow_extra_args(false);
  if (auto done = parse_args(app, argc, argv, rank)) return done;
  for (const auto& kv : opts) {
    const auto eq = kv.find('=');
    a.options[kv.substr(0, eq)] = eq == std::string::npos ? "1" : kv.substr(eq + 1);
  }
  return std::nullopt;
}

void csv_row(const Args& a, const ExchangeCase& cs, const std::string& status, const std::string& note, double w,
             double r, double e, double mbw) {
  std::string readers;
  int total_readers = 0;
  for (int n : cs.readers) total_readers += n;
  const double gbps = e > 0 ? static_cast<double>(cs.step_bytes()) / e / 1e9 : 0;
  fmt::print("{:<14} {:<15} {:<7} {:>9.1f} MiB  write {:>9.5f} s  read {:>9.5f} s  e2e {:>9.5f} s  {:>6.2f} GB/s  "
             "memcpy {:>6.2f} GB/s  {}{}{}\n",
             a.method, cs.name, cs.counts(), static_cast<double>(cs.step_bytes()) / 1048576.0, w, r, e, gbps, mbw, status,
             note.empty() ? "" : ": ", note);
  std::fflush(stdout);
  if (a.csv.empty()) return;
  std::string clean = note;
  std::replace(clean.begin(), clean.end(), ',', ';');
  std::replace(clean.begin(), clean.end(), '\n', ' ');
  std::ofstream out(a.csv, std::ios::app);
  out << fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.4g},{:.4g},{},{}\n", a.method, cs.name, cs.counts(),
                     cs.writers, total_readers, cs.step_bytes(), cs.steps, w, r, e, gbps, mbw, status, clean);
}

}  // namespace

void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  // Poll every 50 us at first, then less and less often (up to every 1 ms):
  // ranks waiting through another phase wake rarely, instead of thousands
  // of times a second each, which took the cores from the ranks being
  // timed wherever processes outnumber cores.
  auto nap = std::chrono::microseconds(50);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
  // Everyone is here now, but may have noticed up to a nap late: leave
  // together, so that the next phase starts at the same time on all ranks.
  MPI_Barrier(comm);
}

int run_exchange(int argc, char** argv, const std::vector<std::string>& method_names, const MethodFactory& factory) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Context ctx;
  ctx.world = MPI_COMM_WORLD;
  MPI_Comm_rank(ctx.world, &ctx.world_rank);
  int world_size = 1;
  MPI_Comm_size(ctx.world, &world_size);
  Args args;
  if (auto done = parse(argc, argv, ctx.world_rank, method_names, args)) {
    MPI_Finalize();
    return *done;
  }
  try {
    ctx.cs = make_case({args.case_name, args.writers, args.readers, args.steps, args.size});
  } catch (const std::exception& e) {
    if (ctx.world_rank == 0) fmt::print(stderr, "cove-compare: {}\n", e.what());
    MPI_Finalize();
    return 2;
  }
  ctx.dir = args.dir;
  ctx.run_id = args.run_id;
  ctx.options = args.options;
  ctx.role = args.role == "writer" ? Role::Writer : Role::Reader;
  ctx.group = args.role == "reader2" ? 1 : 0;
  const int color = args.role == "writer" ? 0 : 1 + ctx.group;
  MPI_Comm_split(ctx.world, color, ctx.world_rank, &ctx.local);
  MPI_Comm_rank(ctx.local, &ctx.local_rank);

  // Who is where, and does the job match the case?
  std::vector<int> colors(static_cast<std::size_t>(world_size)), locals(static_cast<std::size_t>(world_size));
  MPI_Allgather(&color, 1, MPI_INT, colors.data(), 1, MPI_INT, ctx.world);
  MPI_Allgather(&ctx.local_rank, 1, MPI_INT, locals.data(), 1, MPI_INT, ctx.world);
  ctx.world_rank_of_writer.assign(static_cast<std::size_t>(ctx.cs.writers), -1);
  ctx.world_rank_of_reader.clear();
  for (int n : ctx.cs.readers) ctx.world_rank_of_reader.emplace_back(static_cast<std::size_t>(n), -1);
  bool layout_ok = true;
  for (int r = 0; r < world_size; ++r) {
    const int c = colors[static_cast<std::size_t>(r)], l = locals[static_cast<std::size_t>(r)];
    auto& slot = c == 0 ? ctx.world_rank_of_writer : ctx.world_rank_of_reader[static_cast<std::size_t>(std::min<int>(c - 1, static_cast<int>(ctx.cs.readers.size()) - 1))];
    if (c > static_cast<int>(ctx.cs.readers.size()) || l >= static_cast<int>(slot.size())) layout_ok = false;
    else slot[static_cast<std::size_t>(l)] = r;
  }
  for (int r : ctx.world_rank_of_writer) layout_ok = layout_ok && r >= 0;
  for (const auto& g : ctx.world_rank_of_reader)
    for (int r : g) layout_ok = layout_ok && r >= 0;
  if (!layout_ok) {
    if (ctx.world_rank == 0)
      fmt::print(stderr, "cove-compare: the job's ranks do not match case {} {} (see --writers/--readers)\n",
                 ctx.cs.name, ctx.cs.counts());
    MPI_Finalize();
    return 2;
  }

  // Buffers: writers hold their piece of every variable; readers their region.
  std::vector<Block> blocks;
  std::vector<std::vector<unsigned char>> storage;
  for (const auto& v : ctx.cs.vars) {
    const Box& b = ctx.my_box(v);
    const std::size_t bytes = static_cast<std::size_t>(b.volume()) * elem_size(v.elem);
    storage.emplace_back(bytes, static_cast<unsigned char>(0xFF));
    blocks.push_back({&v, b, storage.back().data(), bytes});
  }

  auto method = factory(args.method);
  int skipped = 0;
  std::string why;
  try {
    method->setup(ctx);
  } catch (const Skip& s) {
    skipped = 1;
    why = s.what();
  } catch (const std::exception& e) {
    fmt::print(stderr, "cove-compare: {} rank {}: setup: {}\n", args.method, ctx.world_rank, e.what());
    MPI_Abort(ctx.world, 1);
  }
  int any_skipped = 0;
  MPI_Allreduce(&skipped, &any_skipped, 1, MPI_INT, MPI_MAX, ctx.world);
  if (any_skipped) {
    if (ctx.world_rank == 0) csv_row(args, ctx.cs, "skipped", why.empty() ? "skipped on another rank" : why, 0, 0, 0, 0);
    MPI_Finalize();
    return 4;
  }

  try {
    method->place(ctx, blocks);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cove-compare: {} rank {}: placing the buffers: {}\n", args.method, ctx.world_rank, e.what());
    MPI_Abort(ctx.world, 1);
  }

  double mbw = 0;
  if (ctx.world_rank == 0) mbw = memcpy_gbps(ctx.cs.step_bytes());
  quiet_barrier(ctx.world);

  const int warmup = std::max(0, args.warmup);
  const int total_steps = ctx.cs.steps + warmup;  // the first `warmup` steps are not counted
  std::vector<double> wt(static_cast<std::size_t>(total_steps), 0.0), rt(wt), t_start(wt), t_end(wt);
  std::uint64_t bad = 0;
  std::string first_bad;
  const bool writer = ctx.role == Role::Writer;
  try {
    for (int s = 0; s < total_steps; ++s) {
      const auto step = static_cast<std::uint64_t>(s);
      const auto i = static_cast<std::size_t>(s);
      if (writer)
        for (auto& b : blocks) fill(*b.var, b.box, step, b.data);
      quiet_barrier(ctx.world);
      if (method->coupled()) {
        const double t0 = now_s();
        if (writer) method->write(ctx, step, blocks);
        else method->read(ctx, step, blocks);
        const double t1 = now_s();
        (writer ? wt : rt)[i] = t1 - t0;
        t_start[i] = -t0;  // reduced with MAX: -(earliest start)
        t_end[i] = t1;
      } else {
        if (writer) {
          const double t0 = now_s();
          method->write(ctx, step, blocks);
          wt[i] = now_s() - t0;
          method->after_write(ctx, step, blocks);
        }
        quiet_barrier(ctx.world);
        if (!writer) {
          const double t0 = now_s();
          method->read(ctx, step, blocks);
          rt[i] = now_s() - t0;
        }
      }
      // Every reader checks its bytes only once all have read: a reader
      // that verifies while others are still in their timed read takes
      // cores from them wherever processes outnumber cores.
      quiet_barrier(ctx.world);
      if (!writer)
        for (auto& b : blocks) bad += verify(*b.var, b.box, step, b.data, &first_bad);
      quiet_barrier(ctx.world);
      method->after_read(ctx, step, blocks);
    }
    method->finish(ctx);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cove-compare: {} rank {}: {}\n", args.method, ctx.world_rank, e.what());
    std::fflush(stderr);
    MPI_Abort(ctx.world, 1);
  }
  if (!first_bad.empty())
    fmt::print(stderr, "cove-compare: {} rank {}: WRONG DATA: {}\n", args.method, ctx.world_rank, first_bad);

  std::vector<double> wmax(wt.size()), rmax(wt.size()), smax(wt.size()), emax(wt.size());
  MPI_Reduce(wt.data(), wmax.data(), total_steps, MPI_DOUBLE, MPI_MAX, 0, ctx.world);
  MPI_Reduce(rt.data(), rmax.data(), total_steps, MPI_DOUBLE, MPI_MAX, 0, ctx.world);
  MPI_Reduce(t_start.data(), smax.data(), total_steps, MPI_DOUBLE, MPI_MAX, 0, ctx.world);
  MPI_Reduce(t_end.data(), emax.data(), total_steps, MPI_DOUBLE, MPI_MAX, 0, ctx.world);
  unsigned long long bad_all = 0, bad_mine = bad;
  MPI_Reduce(&bad_mine, &bad_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, ctx.world);
  int rc = 0;
  if (ctx.world_rank == 0) {
    std::vector<double> w(wmax.begin() + warmup, wmax.end()), r(rmax.begin() + warmup, rmax.end()), e;
    for (int s = warmup; s < total_steps; ++s) {
      const auto i = static_cast<std::size_t>(s);
      e.push_back(method->coupled() ? emax[i] + smax[i] : wmax[i] + rmax[i]);
    }
    if (args.options.count("per-step"))
      for (int s = 0; s < total_steps; ++s) {
        const auto i = static_cast<std::size_t>(s);
        fmt::print("  step {}{}: write {:.5f} s  read {:.5f} s  e2e {:.5f} s\n", s, s < warmup ? " (warm-up)" : "", wmax[i],
                   rmax[i], method->coupled() ? emax[i] + smax[i] : wmax[i] + rmax[i]);
      }
    std::string note = args.options.count("note") ? args.options.at("note") : "";
    if (bad_all) note = std::to_string(bad_all) + " wrong elements" + (note.empty() ? "" : "; " + note);
    csv_row(args, ctx.cs, bad_all ? "FAILED" : "ok", note, median(w), median(r), median(e), mbw);
    rc = bad_all ? 3 : 0;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, ctx.world);
  method.reset();
  MPI_Comm_free(&ctx.local);
  MPI_Finalize();
  return rc;
}

}  // namespace cove::bench
