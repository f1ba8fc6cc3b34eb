// cove-compare: the always-built methods of the comparison benchmark (Cove
// staged and direct, binary files warm and cold, the hand-written MPI
// redistribution) over one case; bench/compare.py runs it for every method,
// case and process count. One run, e.g. 3 writers and 1 reader:
//
//   mpiexec -n 3 cove-compare --method cove-staged --role writer --case grid-particles --writers 3 --readers 1 :
//           -n 1 cove-compare --method cove-staged --role reader --case grid-particles --writers 3 --readers 1
//
// (Cove methods find their servers through COVE_CONNECT.) Options and output:
// bench/compare/exchange_runner.hpp.
#include "compare_methods.hpp"

int main(int argc, char** argv) {
  using namespace cove::bench;
  const std::vector<std::string> names = {"cove-staged", "cove-direct", "binary-warm", "binary-cold", "mpi"};
  return run_exchange(argc, argv, names, [](const std::string& m) -> std::unique_ptr<Method> {
    if (m == "cove-staged") return make_cove_method(false);
    if (m == "cove-direct") return make_cove_method(true);
    if (m == "binary-warm") return make_binary_file_method(false);
    if (m == "binary-cold") return make_binary_file_method(true);
    return make_mpi_redistribution_method();
  });
}
