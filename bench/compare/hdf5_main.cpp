// cove-compare-hdf5: the parallel HDF5 baseline of the comparison benchmark.
// Per step the writers create one HDF5 file together (MPI-IO), each variable
// one dataset of the global shape, and write their pieces collectively by
// hyperslab; the readers of each group open the file together and read
// their regions collectively by hyperslab.
//   hdf5-warm  the file stays in the page cache;
//   hdf5-cold  writer rank 0 fsyncs the closed file (timed, part of the
//              write) and drops it from the page cache (untimed) before the
//              readers start.
// Built only when CMake finds a parallel HDF5 (Debian: libhdf5-openmpi-dev).
// Usage as cove-compare (bench/compare/compare_main.cpp).
#include "exchange_runner.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace cove::bench {

namespace {

void check(herr_t rc, const char* what) {
  if (rc < 0) throw std::runtime_error(std::string("HDF5: ") + what + " failed");
}
hid_t check_id(hid_t id, const char* what) {
  if (id < 0) throw std::runtime_error(std::string("HDF5: ") + what + " failed");
  return id;
}

hid_t mem_type(Elem e) {
  switch (e) {
    case Elem::U64: return H5T_NATIVE_UINT64;
    case Elem::F32: return H5T_NATIVE_FLOAT;
    case Elem::F64: return H5T_NATIVE_DOUBLE;
  }
  return H5T_NATIVE_UINT8;
}

class Hdf5Method final : public Method {
 public:
  explicit Hdf5Method(bool cold) : cold_(cold) {}

  void setup(Context& ctx) override {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as codes
    if (ctx.world_rank == 0) std::filesystem::create_directories(ctx.dir);
    quiet_barrier(ctx.world);
  }

  void write(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    const std::string p = path(ctx, step);
    const hid_t fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    check(H5Pset_fapl_mpio(fapl, ctx.local, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    const hid_t file = check_id(H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
    H5Pclose(fapl);
    for (auto& b : blocks) {
      const Variable& v = *b.var;
      std::vector<hsize_t> dims(v.shape.begin(), v.shape.end());
      const hid_t fspace = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
      const hid_t dset = check_id(H5Dcreate2(file, v.name.c_str(), mem_type(v.elem), fspace, H5P_DEFAULT, H5P_DEFAULT,
                                             H5P_DEFAULT), "H5Dcreate2");
      transfer(dset, fspace, b, true);
      H5Dclose(dset);
      H5Sclose(fspace);
    }
    check(H5Fclose(file), "H5Fclose");
    if (cold_ && ctx.local_rank == 0) {
      const int fd = ::open(p.c_str(), O_RDONLY);
      if (fd < 0 || ::fsync(fd) != 0) throw std::runtime_error("cannot fsync " + p);
      ::close(fd);
    }
  }

  void after_write(Context& ctx, std::uint64_t step, std::vector<Block>&) override {
    if (!cold_ || ctx.local_rank != 0) return;
    const std::string p = path(ctx, step);
    const int fd = ::open(p.c_str(), O_RDONLY);
    if (fd < 0) throw std::runtime_error("cannot open " + p);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }

  void read(Context& ctx, std::uint64_t step, std::vector<Block>& blocks) override {
    const std::string p = path(ctx, step);
    const hid_t fapl = check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    check(H5Pset_fapl_mpio(fapl, ctx.local, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    const hid_t file = check_id(H5Fopen(p.c_str(), H5F_ACC_RDONLY, fapl), "H5Fopen");
    H5Pclose(fapl);
    for (auto& b : blocks) {
      const hid_t dset = check_id(H5Dopen2(file, b.var->name.c_str(), H5P_DEFAULT), "H5Dopen2");
      const hid_t fspace = H5Dget_space(dset);
      transfer(dset, fspace, b, false);
      H5Sclose(fspace);
      H5Dclose(dset);
    }
    check(H5Fclose(file), "H5Fclose");
  }

  void after_read(Context& ctx, std::uint64_t step, std::vector<Block>&) override {
    if (ctx.role == Role::Writer && ctx.local_rank == 0) std::filesystem::remove(path(ctx, step));
  }

 private:
  static std::string path(const Context& ctx, std::uint64_t step) {
    return ctx.dir + "/" + ctx.run_id + ".s" + std::to_string(step) + ".h5";
  }

  // Collective hyperslab write or read of block `b`.
  static void transfer(hid_t dset, hid_t fspace, Block& b, bool write) {
    const int nd = b.box.ndim;
    std::vector<hsize_t> start(static_cast<std::size_t>(nd)), count(static_cast<std::size_t>(nd));
    for (int d = 0; d < nd; ++d) {
      start[static_cast<std::size_t>(d)] = static_cast<hsize_t>(b.box.lo[d]);
      count[static_cast<std::size_t>(d)] = static_cast<hsize_t>(b.box.count(d));
    }
    check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
          "H5Sselect_hyperslab");
    const hid_t mspace = H5Screate_simple(nd, count.data(), nullptr);
    const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    const hid_t t = mem_type(b.var->elem);
    if (write) check(H5Dwrite(dset, t, mspace, fspace, dxpl, b.data), "H5Dwrite");
    else check(H5Dread(dset, t, mspace, fspace, dxpl, b.data), "H5Dread");
    H5Pclose(dxpl);
    H5Sclose(mspace);
  }

  bool cold_;
};

}  // namespace

}  // namespace cove::bench

int main(int argc, char** argv) {
  using namespace cove::bench;
  return run_exchange(argc, argv, {"hdf5-warm", "hdf5-cold"}, [](const std::string& m) -> std::unique_ptr<Method> {
    return std::make_unique<Hdf5Method>(m == "hdf5-cold");
  });
}
