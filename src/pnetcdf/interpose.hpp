// The interposition layer's internal interface: what the generated wrappers
// (wrappers.cpp, from generate_wrappers.py) and the hand-written entry points
// share.
#pragma once

#include <mpi.h>
#include <pnetcdf.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#define COVE_PNETCDF_API __attribute__((visibility("default")))

namespace cove::pnetcdf {

// Where a call on an ncid goes: the real library only, Cove only (a coupled
// file in memory mode), or both (a coupled file in `both` mode: the real
// file is written too).
enum class Route { real, cove, both };
Route route(int ncid);

// The real library's symbol, found once per entry point.
template <class Fn>
Fn real_fn(const char* name) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (sym == nullptr) {
    std::fprintf(stderr, "cove-pnetcdf: the real PnetCDF has no %s (%s)\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(sym);
}

// One typed data call (put/get, var/var1/vara/vars/varm/varn, blocking or
// i/b, independent or _all), as a wrapper saw it. `mem` is the memory
// element type from the name's suffix, or NC_NAT for the flexible API
// (then bufcount/buftype say it).
struct Access {
  const char* name = "";
  bool put = false;
  char kind = 0;  // '1', '_' (whole variable), 'a', 's', 'm', 'n'
  int nonblocking = 0;  // 0, 'i' or 'b'
  bool all = false;
  nc_type mem = NC_NAT;
  int ncid = -1;
  int varid = -1;
  const MPI_Offset* start = nullptr;
  const MPI_Offset* count = nullptr;
  const MPI_Offset* stride = nullptr;
  const MPI_Offset* imap = nullptr;
  int num = 0;
  MPI_Offset* const* starts = nullptr;
  MPI_Offset* const* counts = nullptr;
  void* buf = nullptr;
  MPI_Offset bufcount = -1;
  MPI_Datatype buftype = MPI_DATATYPE_NULL;
  int* req = nullptr;
  MPI_Offset buf_elements = -1;  // elements the buffer holds, where known (a packed derived buftype)
  bool meet = true;  // a collective put meets the other ranks (not for each variable of an mput)
  bool now = false;  // a nonblocking get is read when posted, not at its wait (into a derived buftype's packing)
};
int access(const Access& a);
// mput/mget: `a` with the fields of each of `num` variables (nullptr
// arrays: not given); a collective put meets the other ranks once.
int multi_access(const Access& a, int num, const int* varids, MPI_Offset* const* starts, MPI_Offset* const* counts,
                 MPI_Offset* const* strides, MPI_Offset* const* imaps, void* const* bufs, const MPI_Offset* bufcounts,
                 const MPI_Datatype* datatypes);

// Typed attribute calls: put stores `len` values of memory type `mem` as
// external type `xtype`; get converts the attribute to `mem` (NC_NAT: its own type).
int put_att(int ncid, int varid, const char* name, nc_type xtype, MPI_Offset len, const void* buf, nc_type mem);
int get_att(int ncid, int varid, const char* name, void* buf, nc_type mem);

// An entry point that Cove does not implement for coupled files.
int unsupported(int ncid, const char* name);

}  // namespace cove::pnetcdf
