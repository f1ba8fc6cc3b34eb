// Example 01: assemble a region from pieces held in different layouts.
//
// Four "writers" each hold one block of a 6 x 8 array of doubles — two in
// row-major (C) order, two in column-major (F). A "reader" wants rows 1..4,
// columns 2..7 in F order. The spatial index finds the pieces that overlap
// the request; copy_region moves each overlap into place, reorganising the
// layout on the way. This is what a Cove get does, minus the network.
#include <cove/cove.hpp>

#include <fmt/format.h>

#include <vector>

int main() {
  using cove::Box;
  using cove::Index;
  const Box domain = Box::from_shape(std::vector<Index>{6, 8});
  const cove::BlockDecomposition blocks(domain, 4);

  struct Piece {
    Box box;
    cove::Layout layout;
    std::vector<double> data;
  };
  std::vector<Piece> pieces;
  cove::SpatialIndex index(2);
  for (Index id = 0; id < blocks.size(); ++id) {
    Piece p{blocks.block(id), id % 2 ? cove::Layout::f() : cove::Layout::c(), {}};
    p.data.resize(static_cast<std::size_t>(p.box.volume()));
    const auto s = p.layout.strides(p.box);
    for (Index i = p.box.lo[0]; i < p.box.hi[0]; ++i)
      for (Index j = p.box.lo[1]; j < p.box.hi[1]; ++j)
        p.data[(i - p.box.lo[0]) * s[0] + (j - p.box.lo[1]) * s[1]] = static_cast<double>(10 * i + j);
    index.insert(p.box, static_cast<std::uint64_t>(pieces.size()));
    pieces.push_back(std::move(p));
  }

  const Box want = Box::from_start_count(std::vector<Index>{1, 2}, std::vector<Index>{4, 6});
  std::vector<double> out(static_cast<std::size_t>(want.volume()));
  int used = 0;
  index.query(want, [&](const Box& box, std::uint64_t i) {
    const Piece& p = pieces[i];
    cove::copy_region({p.data.data(), p.data.size() * sizeof(double), p.box, p.layout},
                      {out.data(), out.size() * sizeof(double), want, cove::Layout::f()}, box.intersection(want),
                      sizeof(double));
    ++used;
  });

  // In F order the row index varies fastest.
  int wrong = 0;
  for (Index j = 0; j < 6; ++j)
    for (Index i = 0; i < 4; ++i)
      wrong += out[j * 4 + i] != static_cast<double>(10 * (i + 1) + (j + 2));
  fmt::print("assembled {} from {} of {} pieces: {}\n", want.to_string(), used, blocks.size(), wrong ? "WRONG" : "ok");
  return wrong ? 1 : 0;
}
