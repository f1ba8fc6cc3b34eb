// The work every method of the comparison benchmark does: which variables a
// step holds, how writers and readers cut them, what value each element has,
// and how a reader checks what arrived.
//
// Cases (weak-scaled: the data grow with the writer count):
//   grid-particles  LowFive's synthetic case: per writer a 3-D grid of uint64
//                   (side^3 points) and `side^3` particles of 3 x float32;
//                   writers cut the grid along x, readers along y; writers
//                   and readers cut the particle list at different places.
//   kokkos          Kokkos Staging Space case: one writer program, a reader
//                   and a second reader, a 3-D float64 domain; writers cut
//                   along x, the reader along y, the second reader along z.
//   large           one 3-D float64 array of a given size (e.g. 512 MiB),
//                   writers along x, readers along y.
//
// Values encode the element's global index and the step, so a reader detects
// misplaced, missing or stale bytes: uint64 and float64 hold
// index + step * elements (exact: totals stay far below 2^53); a float32 holds
// the same number in its bits as 2^e * (1 + m / 2^23), always finite.
#pragma once

#include <cove/box.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cove::bench {

enum class Elem { U64, F32, F64 };

std::size_t elem_size(Elem e);
const char* elem_name(Elem e);  // "u8", "f4", "f8" as cove::DType::parse spells them

struct Variable {
  std::string name;
  Elem elem;
  std::vector<Index> shape;
  std::vector<Box> writer_boxes;                  // one per writer rank
  std::vector<std::vector<Box>> reader_boxes;     // [group][rank in group]
  Box domain() const { return Box::from_shape(shape); }
  std::uint64_t elements() const { return static_cast<std::uint64_t>(domain().volume()); }
  std::size_t bytes() const { return elements() * elem_size(elem); }
};

struct ExchangeCase {
  std::string name;
  int writers = 1;
  std::vector<int> readers;  // ranks per reader group: {R} or, for kokkos, {R, R}
  int steps = 3;
  std::vector<Variable> vars;
  // Bytes of one step, written once (a second reader group reads them again).
  std::size_t step_bytes() const;
  // "3->1", "2->1+1"
  std::string counts() const;
};

struct CaseOptions {
  std::string name = "grid-particles";
  int writers = 1;
  int readers = 1;
  int steps = 3;
  // grid-particles: grid side per writer (side^3 points, side^3 particles);
  // kokkos: MiB per writer; large: MiB in all.
  double size = 0;
};

// Builds a case; throws std::invalid_argument on a bad name or count.
ExchangeCase make_case(const CaseOptions& o);

// Fills `box` of variable `v` (C order) with the values of `step`.
void fill(const Variable& v, const Box& box, std::uint64_t step, void* data);
// Number of elements of `box` that differ from what fill() writes; the
// first difference is described in `first` (if not null and empty).
std::uint64_t verify(const Variable& v, const Box& box, std::uint64_t step, const void* data, std::string* first);

// Calls fn(src_offset, dst_offset, length), in elements, for each run of
// `part` that is contiguous both in a C-ordered buffer of box `src` and in
// one of box `dst`; `part` lies inside both. Trailing dimensions that `part`
// spans whole in both are merged into one run.
void for_each_run(const Box& src, const Box& dst, const Box& part,
                  const std::function<void(std::size_t, std::size_t, std::size_t)>& fn);

}  // namespace cove::bench
