// `cove worker`: an in-staging consumer worker (docs/placement.md,
// "Workers"). The process takes a worker slot of one server and runs the
// tasks of a dataflow graph whose inputs are placed on that server: a task
// reading objects runs on the server holding most of its input bytes, as
// soon as they are there, a task reading none on the server of most of its
// input tasks. Task outputs
// travel as metadata ("cove.task.<run>.<step>.<task>"), so tasks on other
// servers wait for them. Bytes read from other servers than the worker's
// own are the bytes moved between nodes.
#include "commands.hpp"

#include <cove/box.hpp>
#include <cove/error.hpp>

#include "store/placement/dataflow.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>

namespace cove::tool {

namespace {

using Clock = std::chrono::steady_clock;
using store::placement::Dataflow;
using store::placement::DataObject;
using store::placement::Task;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Box box_of(const DataObject& o) {
  std::vector<Index> start(o.start.begin(), o.start.end()), count(o.count.begin(), o.count.end());
  return Box::from_start_count(start, count);
}

std::uint64_t argmax(const std::vector<std::uint64_t>& v) {
  return static_cast<std::uint64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The value the AMR producer writes (bench/placement_run) at global C-order
// index `linear` of version `version`: exact in a double.
double pattern(std::uint64_t version, std::uint64_t linear) {
  return static_cast<double>((version << 32) + linear);
}

// Checks `data` (the region `box` of a variable of shape `shape`, C order)
// against the pattern; the first wrong element is named.
void verify(const std::string& object, const std::string& var, std::uint64_t version, const Box& shape,
            const Box& box, const std::vector<double>& data) {
  std::vector<Index> at(box.lo.begin(), box.lo.begin() + box.ndim);
  for (std::size_t i = 0; i < data.size(); ++i) {
    std::uint64_t linear = 0;
    for (int d = 0; d < box.ndim; ++d) linear = linear * static_cast<std::uint64_t>(shape.count(d)) + static_cast<std::uint64_t>(at[d]);
    if (data[i] != pattern(version, linear))
      throw Error(Code::Internal, fmt::format("object '{}' ({} version {}): element {} is {} where {} was written",
                                              object, var, version, linear, data[i], pattern(version, linear)));
    for (int d = box.ndim - 1; d >= 0; --d) {
      if (++at[d] < box.hi[d]) break;
      at[d] = box.lo[d];
    }
  }
}

// The task's synthetic work: busy for `s` seconds, so that workers compete
// for cores as real tasks do; or, with `sleep`, idle for them, so that each
// worker is a staging core of its own whatever cores the host has (the
// emulation cove-placement-run uses on small machines).
void work(double s, bool sleep) {
  if (sleep) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
    return;
  }
  const auto until = Clock::now() + std::chrono::duration<double>(s);
  volatile std::uint64_t x = 0;
  while (Clock::now() < until)
    for (int i = 0; i < 1000; ++i) x = x + static_cast<std::uint64_t>(i);
}

// A task reading no objects (join, correction, output) runs on the server
// of most of its input tasks (ties: the first input's).
int home_of_inputs(const Task& task, const std::vector<int>& home, std::size_t servers) {
  std::vector<int> votes(servers, 0);
  for (const auto& in : task.after) ++votes[static_cast<std::size_t>(home[static_cast<std::size_t>(in.task)])];
  int best = home[static_cast<std::size_t>(task.after.front().task)];
  for (const auto& in : task.after) {
    const int h = home[static_cast<std::size_t>(in.task)];
    if (votes[static_cast<std::size_t>(h)] > votes[static_cast<std::size_t>(best)]) best = h;
  }
  return best;
}

}  // namespace

int worker(Client& client, const WorkerArgs& a) {
  const Clock::time_point started = Clock::now();
  const Dataflow g = Dataflow::load(a.graph);
  const std::size_t servers = client.servers().size();
  if (a.server < 0 || static_cast<std::size_t>(a.server) >= servers)
    throw Error(Code::OutOfRange, fmt::format("--server {}: the group has {} servers", a.server, servers));
  const std::string name = a.name.empty() ? fmt::format("worker-{}", a.server) : a.name;
  const WorkerSlot slot = client.become_worker(static_cast<std::size_t>(a.server), name);
  const bool by_reads = a.monitor == "reads";
  client.monitor_reads(by_reads);
  if (slot.slot >= static_cast<std::uint32_t>(a.per_server))
    throw Error(Code::InvalidArgument, fmt::format("worker '{}' got slot {} of server {}, but --per-server is {}: "
                                                   "more workers registered there than the run expects",
                                                   name, slot.slot, a.server, a.per_server));
  // Every worker of the run announces itself (a metadata entry, which
  // stays: a worker that finished early still counts) and waits for the
  // others before any task waits on another's output; one that never
  // registers is named.
  const std::byte here[1] = {std::byte{1}};
  client.put_meta(fmt::format("cove.worker.{}.{}.{}", a.run, a.server, slot.slot), 0, here);
  const auto wait_until = Clock::now() + std::chrono::milliseconds(a.timeout_ms);
  for (std::size_t s = 0; s < servers; ++s)
    for (int w = 0; w < a.per_server; ++w) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(wait_until - Clock::now()).count();
      try {
        client.get_meta(fmt::format("cove.worker.{}.{}.{}", a.run, s, w), 0, std::max<std::int64_t>(0, left));
      } catch (const Error& e) {
        if (e.code() != Code::Timeout && e.code() != Code::NotFound) throw;
        throw Error(Code::Timeout, fmt::format("worker '{}': after {} ms worker {} of server {} ({}) has not "
                                               "registered for run '{}'",
                                               name, a.timeout_ms, w, s, client.servers()[s], a.run));
      }
    }

  std::map<std::string, VariableDefinition> defs;
  std::uint64_t steps_analysed = 0;
  std::uint64_t tasks_run = 0, object_bytes = 0, remote_object_bytes = 0, edge_bytes = 0, remote_edge_bytes = 0;
  double busy = 0, waiting = 0;
  // Per analysed step: the step, when this worker began it and when its
  // tasks of it were done (seconds of the system clock, as the producer's).
  std::vector<std::tuple<int, double, double>> timeline;
  const std::vector<int> order = g.topological_order();
  // --newest: the analysis takes the newest step there whenever it is
  // free (the paper's loosely coupled analysis). Worker 0 of server 0
  // plans: after each analysed step it publishes the next one (metadata
  // cove.plan.<run>, version n: the step, -1 at the end), the newest the
  // producer announced: wholly written (cove.written.<run>, version =
  // step; --plan-by written) or begun, its first block written
  // (cove.begun.<run>; --plan-by begun), for an analysis that reads each
  // block as it comes.
  const bool leader = a.server == 0 && slot.slot == 0;
  const std::string plan_name = fmt::format("cove.plan.{}", a.run),
                    written = fmt::format("cove.{}.{}", a.plan_by, a.run);
  auto publish = [&](std::uint64_t n, std::int64_t step) {
    std::vector<std::byte> b(sizeof step);
    std::memcpy(b.data(), &step, sizeof step);
    client.put_meta(plan_name, n, b);
  };
  auto newest_after = [&](std::int64_t previous) -> std::int64_t {
    const Metadata m = previous < 0 ? client.get_meta_latest(written, a.timeout_ms)
                                    : client.get_meta_next(written, static_cast<std::uint64_t>(previous), a.timeout_ms);
    return static_cast<std::int64_t>(client.get_meta_latest(written, 0).version > m.version
                                         ? client.get_meta_latest(written, 0).version
                                         : m.version);
  };
  if (a.newest && leader) publish(0, newest_after(-1));
  for (std::uint64_t n = 0;; ++n) {
    int step = static_cast<int>(n);
    if (a.newest) {
      const Metadata m = client.get_meta(plan_name, n, a.timeout_ms);
      std::int64_t planned = -1;
      if (m.data.size() == sizeof planned) std::memcpy(&planned, m.data.data(), sizeof planned);
      if (planned < 0) break;
      step = static_cast<int>(planned);
    } else if (step >= a.steps) {
      break;
    }
    ++steps_analysed;
    const double step_began = unix_seconds();
    // Where each task runs, decided in graph order as the step's data
    // arrives: a task reading objects on the server holding most of their
    // bytes (the index, asked once they are all there), so that it starts
    // as soon as its data is placed; one reading none on the server of most
    // of its input tasks. Tasks on one server are dealt to its workers in
    // turn.
    const std::string prefix = fmt::format("cove.task.{}.{}.", a.run, step);
    std::vector<int> home(g.tasks().size(), 0);
    std::vector<int> dealt(servers, 0);
    auto run = [&](int t) {
      const Task& task = g.tasks()[static_cast<std::size_t>(t)];
      std::uint64_t contributed = 1;
      for (const auto& in : task.after) {
        const Task& from = g.tasks()[static_cast<std::size_t>(in.task)];
        const Clock::time_point w = Clock::now();
        Metadata m;
        try {
          m = client.get_meta(prefix + from.name, 0, a.timeout_ms);
        } catch (const Error& e) {
          if (e.code() != Code::Timeout) throw;
          throw Error(Code::Timeout, fmt::format("worker '{}': task '{}' waited {} ms for the output of task '{}' "
                                                 "(on server {}): {}",
                                                 name, task.name, a.timeout_ms, from.name,
                                                 home[static_cast<std::size_t>(in.task)], e.what()));
        }
        waiting += seconds_since(w);
        std::uint64_t elements = 0;
        if (m.data.size() < sizeof elements)
          throw Error(Code::Internal, fmt::format("output of task '{}' has {} bytes", from.name, m.data.size()));
        std::memcpy(&elements, m.data.data(), sizeof elements);
        contributed += elements;
        edge_bytes += in.bytes;
        if (home[static_cast<std::size_t>(in.task)] != a.server) remote_edge_bytes += in.bytes;
      }
      for (int o : task.reads) {
        const DataObject& obj = g.objects()[static_cast<std::size_t>(o)];
        auto it = defs.find(obj.var);
        if (it == defs.end()) it = defs.emplace(obj.var, client.definition(obj.var)).first;
        const Box box = box_of(obj);
        const std::uint64_t version = obj.version + static_cast<std::uint64_t>(step);
        const std::size_t elem = it->second.dtype.size();
        const std::vector<std::uint64_t> before = client.bytes_read();
        std::vector<double> data((static_cast<std::size_t>(box.volume()) * elem + sizeof(double) - 1) / sizeof(double));
        client.get(obj.var, version, box, data.data(), static_cast<std::size_t>(box.volume()) * elem, a.timeout_ms);
        const std::vector<std::uint64_t> after = client.bytes_read();
        for (std::size_t s = 0; s < after.size(); ++s) {
          object_bytes += after[s] - before[s];
          if (static_cast<int>(s) != a.server) remote_object_bytes += after[s] - before[s];
        }
        if (a.verify) {
          if (it->second.dtype.size() != sizeof(double) || !it->second.shape)
            throw Error(Code::InvalidArgument,
                        fmt::format("--verify: variable '{}' is not a float64 array with a shape", obj.var));
          verify(obj.name, obj.var, version, *it->second.shape, box, data);
        }
      }
      const Clock::time_point b = Clock::now();
      work(task.cost * a.cost_scale, a.work == "sleep");
      const double took = seconds_since(b);
      busy += took;
      if (!task.reads.empty() && !by_reads) {
        // The task monitor's end event, for the placement of the next step.
        const DataObject& first = g.objects()[static_cast<std::size_t>(task.reads.front())];
        client.task_done(first.var, box_of(first), took);
      }
      // The output: how many tasks it sums up, the task's execution time
      // (the task monitor's explicit end event), padded to the edge's bytes.
      std::uint64_t out_bytes = sizeof contributed + sizeof took;
      for (const Task& other : g.tasks())
        for (const auto& in : other.after)
          if (in.task == t) out_bytes = std::max<std::uint64_t>(out_bytes, in.bytes);
      std::vector<std::byte> out(std::min<std::uint64_t>(out_bytes, std::uint64_t{1} << 20));
      std::memcpy(out.data(), &contributed, sizeof contributed);
      std::memcpy(out.data() + sizeof contributed, &took, sizeof took);
      client.put_meta(prefix + task.name, 0, out);
      ++tasks_run;
    };
    for (int t : order) {
      const Task& task = g.tasks()[static_cast<std::size_t>(t)];
      int s = 0;
      if (!task.reads.empty()) {
        // Ties go to the server holding most of the first object read (a
        // local task's own block, before its neighbours' halo).
        std::vector<std::uint64_t> bytes(servers, 0);
        std::size_t first = 0;
        for (int o : task.reads) {
          const DataObject& obj = g.objects()[static_cast<std::size_t>(o)];
          const std::vector<std::uint64_t> held =
              client.locate(obj.var, obj.version + static_cast<std::uint64_t>(step), box_of(obj), a.timeout_ms);
          if (o == task.reads.front()) first = argmax(held);
          for (std::size_t i = 0; i < bytes.size() && i < held.size(); ++i) bytes[i] += held[i];
        }
        s = static_cast<int>(bytes[first] == bytes[argmax(bytes)] ? first : argmax(bytes));
      } else if (!task.after.empty()) {
        s = home_of_inputs(task, home, servers);
      }
      home[static_cast<std::size_t>(t)] = s;
      if (s == a.server && dealt[static_cast<std::size_t>(s)] % a.per_server == static_cast<int>(slot.slot)) run(t);
      ++dealt[static_cast<std::size_t>(s)];
    }
    timeline.push_back({step, step_began, unix_seconds()});
    // By read intervals, the step's last read ends when its tasks are done,
    // not when the next step's first read comes.
    client.end_read_task();
    if (a.newest && leader) {
      // The step is analysed when every task's output is there.
      for (const Task& task : g.tasks()) client.get_meta(prefix + task.name, 0, a.timeout_ms);
      publish(n + 1, step >= a.steps - 1 ? -1 : newest_after(step));
    }
  }
  const double wall = seconds_since(started);
  if (a.json) {
    nlohmann::json j = {{"worker", name},
                        {"server", a.server},
                        {"slot", slot.slot},
                        {"steps", a.steps},
                        {"steps_analysed", steps_analysed},
                        {"tasks", tasks_run},
                        {"object_bytes", object_bytes},
                        {"remote_object_bytes", remote_object_bytes},
                        {"edge_bytes", edge_bytes},
                        {"remote_edge_bytes", remote_edge_bytes},
                        {"busy_s", busy},
                        {"wait_s", waiting},
                        {"wall_s", wall},
                        {"timeline", timeline}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("worker '{}' (server {}, slot {}): {} tasks in {} steps, read {} ({} from other servers), "
               "task outputs {} ({} from other servers), busy {:.3f} s, {:.3f} s in all\n",
               name, a.server, slot.slot, tasks_run, a.steps, human_bytes(object_bytes),
               human_bytes(remote_object_bytes), human_bytes(edge_bytes), human_bytes(remote_edge_bytes), busy, wall);
  }
  return 0;
}

}  // namespace cove::tool
