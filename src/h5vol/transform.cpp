#include "h5vol/transform.hpp"

#include "h5vol/errors.hpp"
#include "h5vol/lossy.hpp"
#include "h5vol/transfer.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cove::h5vol {
namespace {

struct Scratch {
  Hid file;
  Hid dataset;
  Hid xfer;     // a transfer list with the transform only
  Hid select;   // the file selection
  Hid packed;   // its elements in a row
  hssize_t n = 0;
};

// The dataset's type and shape in a native file in memory, chunked by the
// selection's bounding box (only the chunks it touches take memory).
Scratch scratch(const Node& dataset, hid_t file_space, const std::string& expression) {
  Scratch s;
  s.select = Hid(file_space == H5S_ALL ? dataset.make_space() : check(H5Scopy(file_space), "H5Scopy"));
  s.n = check(H5Sget_select_npoints(s.select.get()), "H5Sget_select_npoints");
  if (s.n == 0) return s;
  const auto n = static_cast<hsize_t>(s.n);
  s.packed = Hid(check(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
  s.xfer = Hid(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
  check(H5Pset_data_transform(s.xfer.get(), expression.c_str()), "H5Pset_data_transform");
  Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  const auto rank = static_cast<int>(dataset.dims.size());
  if (rank > 0) {
    std::vector<hsize_t> lo(dataset.dims.size()), hi(dataset.dims.size()), chunk(dataset.dims.size());
    check(H5Sget_select_bounds(s.select.get(), lo.data(), hi.data()), "H5Sget_select_bounds");
    for (std::size_t d = 0; d < chunk.size(); ++d) chunk[d] = std::max<hsize_t>(1, hi[d] - lo[d] + 1);
    check(H5Pset_chunk(dcpl.get(), rank, chunk.data()), "H5Pset_chunk");
  }
  s.file = native_file_in_memory();
  Hid space(dataset.make_space());
  s.dataset = Hid(check(H5Dcreate2(s.file.get(), "d", dataset.type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        "H5Dcreate2 of the dataset for the data transform"));
  return s;
}

}  // namespace

std::string data_transform(hid_t dxpl) {
  if (dxpl < 0 || dxpl == H5P_DEFAULT) return "";
  // H5Pget_data_transform fails (and HDF5 prints its stack) when none is set: printing is off for the question.
  H5E_auto2_t print = nullptr;
  void* print_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &print, &print_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const ssize_t length = H5Pget_data_transform(dxpl, nullptr, 0);
  std::string expression;
  if (length > 0) {
    expression.resize(static_cast<std::size_t>(length) + 1);
    H5Pget_data_transform(dxpl, expression.data(), expression.size());
    expression.resize(static_cast<std::size_t>(length));
  }
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, print, print_data);
  return expression;
}

void write_transformed(FileState& file, Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                       const std::string& expression, const void* buf) {
  auto s = scratch(dataset, file_space, expression);
  if (s.n == 0) return;
  const hid_t type = dataset.type.get();
  check(H5Dwrite(s.dataset.get(), mem_type, mem_space, s.select.get(), s.xfer.get(), buf), "H5Dwrite with the data transform");
  std::vector<std::byte> values(static_cast<std::size_t>(s.n) * H5Tget_size(type));
  check(H5Dread(s.dataset.get(), type, s.packed.get(), s.select.get(), H5P_DEFAULT, values.data()), "H5Dread of the transformed values");
  write_dataset(file, dataset, type, s.packed.get(), s.select.get(), values.data());
}

void read_transformed(FileState& file, const Node& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                      const std::string& expression, void* buf) {
  auto s = scratch(dataset, file_space, expression);
  if (s.n == 0) return;
  const hid_t type = dataset.type.get();
  std::vector<std::byte> values(static_cast<std::size_t>(s.n) * H5Tget_size(type));
  read_dataset(file, dataset, type, s.packed.get(), s.select.get(), values.data());
  check(H5Dwrite(s.dataset.get(), type, s.packed.get(), s.select.get(), H5P_DEFAULT, values.data()), "H5Dwrite of the stored values");
  check(H5Dread(s.dataset.get(), mem_type, mem_space, s.select.get(), s.xfer.get(), buf), "H5Dread with the data transform");
}

}  // namespace cove::h5vol
