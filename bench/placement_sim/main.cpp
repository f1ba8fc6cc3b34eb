// cove-placement-sim: the in-staging placement paper's experiments at its
// scale (Figures 8-11), by discrete-event simulation of the workflows with
// the placement code the servers link (src/store/placement). Writes CSV
// files; bench/placement_plots.py draws them. Prints the targets as
// ratios between policies of the same run, and the decision cost measured
// here (wall clock of Placer::place).
//
// Usage: cove-placement-sim [--quick | --small] [--out DIR] [--steps N]
#include "../bench_cli.hpp"
#include "sim.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace {

using cove::sim::DecisionTimes;
using cove::sim::Params;
using cove::sim::Policy;
using cove::store::placement::policy_name;

const Policy kTight[] = {Policy::rr_blocking, Policy::rr_nonblocking, Policy::time};
const Policy kAll[] = {Policy::rr_blocking, Policy::rr_nonblocking, Policy::time, Policy::data, Policy::hybrid};

std::ofstream open_csv(const std::string& dir, const std::string& name, const std::string& header) {
  std::ofstream f(dir + "/" + name);
  f << header << "\n";
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Simulates the in-staging placement paper's experiments with Cove's placement code"};
  bool quick = false, small = false;
  std::string out = "placement-sim";
  int steps = 100;
  std::string only;
  double analysis_cost = 0, latency_us = 0, bandwidth_gbs = 0;
  app.add_flag("--quick", quick, "fewer core counts and depth ranges, 30 steps");
  app.add_flag("--small", small, "a small deterministic configuration (the test)");
  app.add_option("--out", out, "folder for the CSV files");
  app.add_option("--steps", steps, "simulation steps")->check(CLI::Range(2, 1000));
  app.add_option("--only", only, "run only the tight (Figures 8, 9) or the loose (10, 11) experiments")
      ->check(CLI::IsMember({"tight", "loose"}));
  app.add_option("--analysis-cost", analysis_cost, "seconds of an analysis task on a block at the minimum depth");
  app.add_option("--latency-us", latency_us, "network latency per message in microseconds (default 20), e.g. measured")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bandwidth-gbs", bandwidth_gbs, "bytes per second between nodes, in GB/s (default 2), e.g. measured")
      ->check(CLI::PositiveNumber);
  if (auto rc = cove::bench::parse_args(app, argc, argv)) return *rc;
  if (quick) steps = std::min(steps, 30);
  std::filesystem::create_directories(out);

  Params base;
  base.steps = steps;
  if (analysis_cost > 0) base.analysis_cost = analysis_cost;
  if (latency_us > 0) base.latency = latency_us * 1e-6;
  if (bandwidth_gbs > 0) base.bandwidth = bandwidth_gbs * 1e9;
  fmt::print("model: latency {} us, bandwidth {} GB/s, block {} bytes, producer cost {} s, analysis cost {} s\n",
             base.latency * 1e6, base.bandwidth / 1e9, base.block_bytes, base.producer_cost, base.analysis_cost);
  std::vector<int> fig8_cores = {256, 512, 1024, 2048, 4096, 8192};
  std::vector<int> fig9_max = {6, 7, 8, 9};
  int fig9_cores = 8192, loose_producers = 2048;
  std::vector<int> fig11_cores = {256, 512};
  if (quick) {
    fig8_cores = {256, 1024, 8192};
    fig9_max = {6, 8};
  }
  if (small) {
    base.steps = steps = std::min(steps, 12);
    base.min_depth = 2;
    base.max_depth = 4;
    base.features = 2;
    fig8_cores = {16, 64};
    fig9_max = {3, 4};
    fig9_cores = 64;
    loose_producers = 64;
    fig11_cores = {16, 32};
  }

  // Figure 8: end-to-end time of the tightly coupled workflow by core count.
  DecisionTimes decision_times;
  std::map<std::pair<int, Policy>, double> fig8;
  auto f8 = open_csv(out, "fig8_tight_cores.csv", "cores,policy,end_to_end_s,speedup_vs_rr_blocking,max_blocks,tasks");
  auto f8s = open_csv(out, "fig8_tight_steps.csv", "cores,policy,step,cumulative_s");
  if (only == "loose") fig8_cores.clear(), fig9_max.clear();
  if (only == "tight") fig11_cores.clear();
  for (int cores : fig8_cores) {
    Params p = base;
    p.producer_cores = p.consumer_cores = cores;
    for (Policy policy : kTight) {
      const bool timed = cores == (small ? 64 : 1024) && policy == Policy::time;
      const auto r = cove::sim::run_tight(p, policy, timed ? &decision_times : nullptr);
      fig8[{cores, policy}] = r.end;
      const double speedup = fig8[{cores, Policy::rr_blocking}] / r.end;
      f8 << fmt::format("{},{},{:.6f},{:.4f},{},{}\n", cores, policy_name(policy), r.end, speedup, r.max_blocks, r.tasks);
      for (int s = 0; s < p.steps; ++s) f8s << fmt::format("{},{},{},{:.6f}\n", cores, policy_name(policy), s, r.step_end[s]);
      fmt::print("fig8  cores {:5}  {:15}  end-to-end {:10.3f} s  speedup vs rr-blocking {:5.2f}  blocks {}  tasks {}\n",
                 cores, policy_name(policy), r.end, speedup, r.max_blocks, r.tasks);
    }
  }

  // Figure 9: the same at a fixed core count, deeper refinement.
  auto f9 = open_csv(out, "fig9_tight_depth.csv", "min_depth,max_depth,policy,end_to_end_s,speedup_vs_rr_blocking,max_blocks");
  for (int maxd : fig9_max) {
    Params p = base;
    p.producer_cores = p.consumer_cores = fig9_cores;
    p.max_depth = maxd;
    double rr = 0;
    for (Policy policy : kTight) {
      const auto r = cove::sim::run_tight(p, policy);
      if (policy == Policy::rr_blocking) rr = r.end;
      f9 << fmt::format("{},{},{},{:.6f},{:.4f},{}\n", p.min_depth, maxd, policy_name(policy), r.end, rr / r.end, r.max_blocks);
      fmt::print("fig9  depth {}-{}  {:15}  end-to-end {:10.3f} s  speedup vs rr-blocking {:5.2f}  blocks {}\n", p.min_depth,
                 maxd, policy_name(policy), r.end, rr / r.end, r.max_blocks);
    }
  }

  // Figures 10 and 11: the loosely coupled AMR + k-way reduction analysis.
  auto f10 = open_csv(out, "fig10_loose_step.csv", "analysis_cores,policy,step,start_s,end_s,bytes_moved");
  auto f10a = open_csv(out, "fig10_amr_steps.csv", "policy,step,end_s");
  auto f11 = open_csv(out, "fig11_loose_frequency.csv", "analysis_cores,policy,steps_analysed,amr_steps,amr_end_s");
  std::map<std::pair<int, Policy>, int> analysed;
  std::map<Policy, std::uint64_t> moved;
  std::map<Policy, double> moved_mean;  // over every analysed step: one step is a sample of a noisy series
  for (int cores : fig11_cores) {
    Params p = base;
    p.producer_cores = loose_producers;
    p.consumer_cores = cores;
    for (Policy policy : kAll) {
      const auto r = cove::sim::run_loose(p, policy);
      analysed[{cores, policy}] = static_cast<int>(r.analysed.size());
      f11 << fmt::format("{},{},{},{},{:.6f}\n", cores, policy_name(policy), r.analysed.size(), p.steps, r.end);
      // Figure 10's step: the first analysed at or after a tenth of the run.
      const cove::sim::AnalysisStep* one = nullptr;
      for (const auto& a : r.analysed) {
        f10 << fmt::format("{},{},{},{:.6f},{:.6f},{}\n", cores, policy_name(policy), a.step, a.start, a.end, a.bytes_moved);
        if (!one && a.step >= p.steps / 10) one = &a;
      }
      if (cores == fig11_cores.front()) {
        for (int s = 0; s < p.steps; ++s) f10a << fmt::format("{},{},{:.6f}\n", policy_name(policy), s, r.amr_step_end[s]);
        if (one) moved[policy] = one->bytes_moved;
        double sum = 0;
        for (const auto& a : r.analysed) sum += static_cast<double>(a.bytes_moved);
        if (!r.analysed.empty()) moved_mean[policy] = sum / static_cast<double>(r.analysed.size());
      }
      fmt::print("fig10/11  analysis cores {:4}  {:15}  steps analysed {:3} of {}  step {} bytes moved {}{}\n", cores,
                 policy_name(policy), r.analysed.size(), p.steps, one ? one->step : -1, one ? one->bytes_moved : 0,
                 r.partition_warning.empty() ? "" : "  warning: " + r.partition_warning);
    }
  }

  // The targets, as ratios within this run.
  const int tcores = small ? 64 : 1024;
  const double speedup = fig8[{tcores, Policy::rr_blocking}] / fig8[{tcores, Policy::time}];
  const double bytes_ratio = moved[Policy::time] ? static_cast<double>(moved[Policy::hybrid]) / static_cast<double>(moved[Policy::time]) : 0;
  const double bytes_mean_ratio = moved_mean[Policy::time] > 0 ? moved_mean[Policy::hybrid] / moved_mean[Policy::time] : 0;
  const int fcores = fig11_cores.empty() ? 0 : fig11_cores.back();
  const double freq = analysed[{fcores, Policy::rr_blocking}]
                          ? static_cast<double>(analysed[{fcores, Policy::time}]) / analysed[{fcores, Policy::rr_blocking}]
                          : 0;
  auto targets = open_csv(out, "targets.csv", "measure,value,target");
  fmt::print("\ntargets (same-run ratios)\n");
  auto row = [&](const std::string& what, double value, const std::string& target) {
    fmt::print("  {:72} {:10.3f}   target {}\n", what, value, target);
    targets << fmt::format("\"{}\",{:.6f},\"{}\"\n", what, value, target);
  };
  row(fmt::format("end-to-end speedup, time vs rr-blocking, {} producer cores", tcores), speedup, ">= 2");
  row(fmt::format("bytes moved, hybrid / time, one analysis step ({} analysis cores)", fig11_cores.empty() ? 0 : fig11_cores.front()), bytes_ratio,
      "<= 0.3");
  row(fmt::format("bytes moved, hybrid / time, mean over analysed steps ({} analysis cores)",
                  fig11_cores.empty() ? 0 : fig11_cores.front()),
      bytes_mean_ratio, "<= 0.3");
  row(fmt::format("analysis steps in {} steps, time / rr-blocking ({} analysis cores)", steps, fcores), freq, ">= 1.4");
  row(fmt::format("placement decision, median us per put ({} samples)", decision_times.us.size()),
      decision_times.median(), "<= 100");
  fmt::print("CSV files in {}\n", out);
  return 0;
}
