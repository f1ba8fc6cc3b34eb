// The step loop every method of the comparison benchmark runs under, so that
// all methods do the same work and are timed the same way.
//
// One MPMD job: `mpiexec -n W prog --role writer ... : -n R prog --role reader
// ... [: -n R prog --role reader2 ...]`. Per step, untimed: writers fill
// their pieces; then timed:
//   decoupled methods (Cove, files, ADIOS2):  write phase (every writer
//     writes), then an untimed hand-over (methods may drop caches there),
//     then read phase (every reader reads); end-to-end = slowest write +
//     slowest read;
//   coupled methods (the MPI redistribution): one phase in which writers
//     send and readers receive; end-to-end = the phase.
// Then, untimed: readers check every element; methods clean up (release,
// remove files). The first --warmup steps (default 3) are not counted: a
// staging server keeping 2 versions reaches its steady state (piece buffers
// reused, not freshly faulted in) at the third version. Figures are medians
// over the counted steps of the slowest rank.
//
// Waiting between phases uses a barrier that sleeps instead of spinning, so
// idle ranks leave the 2 cores to the ranks being timed.
//
// Output: rank 0 prints one line and appends one CSV row (--csv FILE):
//   method,case,counts,writers,readers,bytes,steps,write_s,read_s,e2e_s,gbps,memcpy_gbps,status,note
// --opt per-step prints every step's figures too; --opt note=TEXT adds a
// note to the row; methods read their own --opt keys.
// Exit status: 0 ok, 3 when any element was wrong, 4 when the method is
// skipped (the CSV row says why), 1 on errors.
#pragma once

#include "exchange_case.hpp"

#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cove::bench {

enum class Role { Writer, Reader };

// Thrown by a method that cannot run this case here; the run is reported as
// skipped with the message as its reason.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Context {
  ExchangeCase cs;
  Role role = Role::Writer;
  int group = 0;            // reader group (0 or 1); 0 for writers
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm local = MPI_COMM_NULL;  // this program's ranks (writers, or one reader group)
  int local_rank = 0;
  int world_rank = 0;
  std::vector<int> world_rank_of_writer;                // [writer rank]
  std::vector<std::vector<int>> world_rank_of_reader;   // [group][rank]
  std::string dir;      // for file-based methods and rendezvous files
  std::string run_id;   // unique per run: prefixes variable and file names
  std::map<std::string, std::string> options;  // --opt key=value

  const Box& my_box(const Variable& v) const {
    return role == Role::Writer ? v.writer_boxes[static_cast<std::size_t>(local_rank)]
                                : v.reader_boxes[static_cast<std::size_t>(group)][static_cast<std::size_t>(local_rank)];
  }
};

// A writer's piece of one variable, or a reader's region and buffer.
struct Block {
  const Variable* var;
  Box box;
  void* data;
  std::size_t bytes;
};

class Method {
 public:
  virtual ~Method() = default;
  // True: writers and readers run in one phase (see above).
  virtual bool coupled() const { return false; }
  // Once, on every rank, before the steps (untimed). May throw Skip.
  virtual void setup(Context&) {}
  // Once, after setup (untimed): a method may move the blocks' bytes into
  // memory of its own, pointing `data` there.
  virtual void place(Context&, std::vector<Block>& /*blocks*/) {}
  // Timed. Writers: store the step's blocks. `data` stays unchanged until
  // after_read() of the same step.
  virtual void write(Context&, std::uint64_t step, std::vector<Block>& blocks) = 0;
  // Untimed, on writers, between the write and the read phase.
  virtual void after_write(Context&, std::uint64_t /*step*/, std::vector<Block>& /*blocks*/) {}
  // Timed. Readers: fill the blocks with the step's data.
  virtual void read(Context&, std::uint64_t step, std::vector<Block>& blocks) = 0;
  // Untimed, on every rank, once every reader has checked the step.
  virtual void after_read(Context&, std::uint64_t /*step*/, std::vector<Block>& /*blocks*/) {}
  // Once, on every rank, after the steps.
  virtual void finish(Context&) {}
};

using MethodFactory = std::function<std::unique_ptr<Method>(const std::string& name)>;

// Parses the command line, runs `method` (from the factory) over the case,
// prints and records the result; returns the exit status. Calls MPI_Init
// and MPI_Finalize itself.
int run_exchange(int argc, char** argv, const std::vector<std::string>& method_names, const MethodFactory& factory);

// A barrier that sleeps between polls (less often the longer it waits)
// instead of spinning; all ranks leave it together.
void quiet_barrier(MPI_Comm comm);

}  // namespace cove::bench
