#include "h5vol/lossy.hpp"

#include "h5vol/errors.hpp"
#include "h5vol/transfer.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <set>
#include <vector>

namespace cove::h5vol {
namespace {

using Chunk = std::vector<hsize_t>;  // a chunk's index in each dimension

// The chunks of `dataset` this version wrote (all when it wrote too many blocks to keep).
std::set<Chunk> written_chunks(const Node& dataset, const std::vector<hsize_t>& chunk) {
  const std::size_t r = chunk.size();
  std::vector<Box> boxes = dataset.written_boxes;
  if (dataset.written_overflow) {
    std::vector<Index> shape(dataset.dims.begin(), dataset.dims.end());
    boxes = {Box::from_shape(shape)};
  }
  std::set<Chunk> out;
  for (const auto& b : boxes) {
    if (static_cast<std::size_t>(b.ndim) != r || b.empty()) continue;
    Chunk first(r), last(r), at(r);
    for (std::size_t d = 0; d < r; ++d) {
      first[d] = static_cast<hsize_t>(b.lo[d]) / chunk[d];
      last[d] = static_cast<hsize_t>(b.hi[d] - 1) / chunk[d];
    }
    at = first;
    while (true) {  // every chunk index from first to last
      out.insert(at);
      std::size_t d = r;
      while (d > 0 && at[d - 1] == last[d - 1]) {
        at[d - 1] = first[d - 1];
        --d;
      }
      if (d == 0) break;
      ++at[d - 1];
    }
  }
  return out;
}

void filter_dataset(FileState& file, Node& dataset) {
  const auto rank = static_cast<int>(dataset.dims.size());
  if (rank == 0 || !dataset.written) return;
  std::vector<hsize_t> chunk(static_cast<std::size_t>(rank));
  if (H5Pget_chunk(dataset.dcpl.get(), rank, chunk.data()) != rank) fail(dataset.path + ": a filtered dataset without chunks");
  const auto chunks = written_chunks(dataset, chunk);
  if (chunks.empty()) return;
  const hid_t type = dataset.type.get();
  // A chunk's cells: (its selection in the dataset, its own shape).
  auto select = [&](const Chunk& c, Hid& region, Hid& block) {
    std::vector<hsize_t> start(chunk.size()), count(chunk.size());
    for (std::size_t d = 0; d < chunk.size(); ++d) {
      start[d] = c[d] * chunk[d];
      count[d] = std::min(dataset.dims[d] - start[d], chunk[d]);
    }
    region = Hid(dataset.make_space());
    check(H5Sselect_hyperslab(region.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), "H5Sselect_hyperslab");
    block = Hid(check(H5Screate_simple(rank, count.data(), nullptr), "H5Screate_simple"));
    return static_cast<std::size_t>(check(H5Sget_select_npoints(region.get()), "H5Sget_select_npoints"));
  };
  Hid native_file = native_file_in_memory();
  Hid space(dataset.make_space());
  Hid d(check(H5Dcreate2(native_file.get(), "d", type, space.get(), H5P_DEFAULT, dataset.dcpl.get(), H5P_DEFAULT),
              "H5Dcreate2 of the filtered dataset in memory"));
  std::vector<std::byte> values;
  for (const auto& c : chunks) {
    Hid region, block;
    values.resize(select(c, region, block) * H5Tget_size(type));
    read_dataset(file, dataset, type, block.get(), region.get(), values.data());  // fill where unwritten
    check(H5Dwrite(d.get(), type, block.get(), region.get(), H5P_DEFAULT, values.data()), "H5Dwrite through the filter");
  }
  // Closed, so that the chunks leave the chunk cache through the filter; read back from the file.
  d.reset();
  d = Hid(check(H5Dopen2(native_file.get(), "d", H5P_DEFAULT), "H5Dopen2 of the filtered dataset in memory"));
  for (const auto& c : chunks) {
    Hid region, block;
    values.resize(select(c, region, block) * H5Tget_size(type));
    check(H5Dread(d.get(), type, block.get(), region.get(), H5P_DEFAULT, values.data()), "H5Dread through the filter");
    write_dataset(file, dataset, type, block.get(), region.get(), values.data());
  }
}

}  // namespace

Hid native_file_in_memory() {
  static std::atomic<unsigned> serial{0};
  const std::string name = "cove-scratch-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  Hid fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  check(H5Pset_fapl_core(fapl.get(), 1 << 20, 0), "H5Pset_fapl_core");
  check(H5Pset_vol(fapl.get(), H5VL_NATIVE, nullptr), "H5Pset_vol");
  return Hid(check(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "H5Fcreate of a native file in memory"));
}

std::string lossy_filter(hid_t dcpl) {
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nelmts = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nelmts, nullptr, 0, nullptr, &config);
    if (id == H5Z_FILTER_SCALEOFFSET) return "the scale-offset filter";
    if (id == H5Z_FILTER_NBIT) return "the n-bit filter";
  }
  return "";
}

void filter_lossy(FileState& file) {
  if (!file.memory || !file.writer || file.published || file.pid != ::getpid()) return;
  for_each_memory_dataset(file.root, [&](Node& n) {
    if (!lossy_filter(n.dcpl.get()).empty()) filter_dataset(file, n);
  });
}

}  // namespace cove::h5vol
