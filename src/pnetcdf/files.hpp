// The coupled files of this process: their schema (what define mode built,
// or what the writer published), their version, and the Cove client they
// use.
#pragma once

#include "config.hpp"
#include "interpose.hpp"
#include "layout.hpp"

#include <cove/client.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cove::pnetcdf {

struct Att {
  std::string name;
  nc_type type = NC_NAT;
  MPI_Offset len = 0;
  std::vector<char> data;  // len elements of `type`, in memory order
};

struct Dim {
  std::string name;
  MPI_Offset len = 0;  // NC_UNLIMITED for the record dimension
};

struct Var {
  std::string name;
  nc_type type = NC_NAT;
  std::vector<int> dims;
  std::vector<Att> atts;
  bool no_fill = true;  // PnetCDF's per-variable fill mode (def_var_fill, set_fill); NC_NOFILL by default
  std::string key;      // the name its Cove variable was made under, when it was renamed since
  // Its fill value as part of its Cove variable's name ("" before the first
  // enddef, or without one): versions with other fill values are other
  // Cove variables. Fixed at the enddef after its definition, as PnetCDF
  // fixes the fill value then (NC_ELATEFILL).
  std::string fill_tag;
};

struct Schema {
  int cmode = 0;
  std::vector<Dim> dims;
  std::vector<Var> vars;
  std::vector<Att> atts;
  int unlimdim = -1;
  MPI_Offset numrecs = 0;
  int fill_mode = NC_NOFILL;  // set_fill's: what variables defined next get
  // Names the writer job in its Cove variables, so that a reader of version v
  // never gets bytes that another job put under the same version (one that
  // died before close, or wrote the same file name at the same time).
  std::uint64_t writer = 0;
  Layout layout;  // the file's layout at the last enddef (layout.hpp)

  std::string serialize() const;
  static Schema parse(const std::string& text);
};

// A shallow put's bytes: a copy in this process's shared memory that
// readers map, indexed by put_local.
struct ShallowPiece {
  std::string var;
  Box box;
  SharedBuffer bytes;
};

struct File {
  std::string path;
  bool writer = false;
  bool real_too = false;  // `both` mode: the real file is written as well
  Transfer transfer = Transfer::deep;
  bool define_mode = false;
  bool published = false;  // the writer has published this version (close, or dtf_transfer)
  bool independent = false;
  bool safe_mode = false;      // PNETCDF_SAFE_MODE=1: collective calls agree on their error
  bool strict_coords = false;  // PNETCDF_RELAX_COORD_BOUND=0: a start must be inside its dimension
  MPI_Comm comm = MPI_COMM_NULL;  // ours, shared by the files of one program communicator
  void* shared_comm = nullptr;
  std::uint64_t version = 0;
  Schema schema;
  // Nonblocking requests, kept until waited for or cancelled. Their ids
  // are PnetCDF's: even for puts, odd for gets. A put's boxes, in the
  // external type, are taken when it is posted (as PnetCDF's bput takes its
  // bytes; an iput's buffer may not change before its wait anyway) and
  // stored when it is waited for. A get is checked when it is posted and
  // read into its buffer when it is waited for, after the wait's puts, as
  // PnetCDF does. A cancel, or a close before the wait, drops either.
  struct PendingPut {
    std::string var;
    Box box;
    std::vector<char> bytes;
  };
  struct Request {
    int status = NC_NOERR;
    bool put = false;
    std::vector<PendingPut> puts;
    std::function<int()> get;  // the read, run at the wait: its status
  };
  // The attached buffer of bput calls, accounted as PnetCDF accounts it:
  // each pending bput takes its external bytes at the tail, and a finished
  // one frees its bytes once every later one is finished too.
  struct BufferEntry {
    int request = NC_REQ_NULL;
    MPI_Offset bytes = 0;
    bool pending = true;
  };
  MPI_Offset buffer_size = -1;  // -1: no buffer attached
  MPI_Offset buffer_used = 0;
  std::vector<BufferEntry> buffer;
  std::map<int, Request> requests;
  int next_request = 0;
  std::vector<ShallowPiece> shallow;  // this version's, while it is open
  std::vector<bool> defined;          // per variable: defined in Cove by this process
  std::size_t fixed_vars = 0;         // variables before the last enddef: their fill value is fixed
  MPI_Info info = MPI_INFO_NULL;      // the hints given at create or open and PNETCDF_HINTS (ours, freed with the file)
  Hints hints;                        // PnetCDF's own hints, as its enddef fixes them
  // What the file's reads and writes would have moved on this rank
  // (ncmpi_inq_put_size, ncmpi_inq_get_size): the data's external bytes,
  // and the header rank 0 writes at each enddef.
  MPI_Offset put_size = 0;
  std::string committed;  // the schema at the last enddef (or open), serialized: what a failed enddef at close keeps
  MPI_Offset get_size = 0;
};

// The bytes (external type) unwritten cells of a variable read as once its
// version is sealed: _FillValue, or the type's default fill; empty in
// NC_NOFILL mode (reading such a cell is then an error, never made-up bytes).
std::vector<std::byte> fill_bytes(const Var& v, int unlimdim);

// The coupled file behind `ncid`, or nullptr.
File* find_file(int ncid);
File* find_file(const std::string& path);
// The ranks of a writer wait for each other (MPI_Barrier): what each put
// before is stored for every rank's gets after. Readers: nothing.
void writers_meet(const File& f);
// Writes the fill value over every fixed-size variable in fill mode
// defined since the last enddef, as PnetCDF's enddef does (the ranks share
// the work and meet after it), and fixes the variables' fill tags.
int fill_at_enddef(File& f, int ncid);
// The one predefined type a (derived) MPI datatype is built of, as a memory
// type; NC_NAT if it mixes types or netCDF has none for it.
nc_type buftype_base(MPI_Datatype t);
// Defines a variable of the file in Cove (once per process), with its fill value.
void define_var(File& f, int varid);
// Stores one box of a put of `var` (external bytes): a copy in Cove (deep
// transfer), or a copy in this process's shared memory that readers map
// (shallow). Throws cove::Error.
void store_box(File& f, const std::string& var, const Box& box, const char* data, std::size_t bytes);
// Writer: makes the data put so far readers' next version (collective over the file's communicator).
int publish(File& f);
Client& client();
// The Cove variable holding a netCDF variable of a file.
std::string cove_name(const File& f, int varid);
// Prints "cove-pnetcdf: what" on stderr and returns code.
int report(int code, const std::string& what);
// Cove's error as a netCDF code (printed).
int from_exception(const char* call, const File& f);

}  // namespace cove::pnetcdf

// A coupled file's call goes to Cove; in `both` mode the real library runs
// it first (NC_ERANGE still wrote the rest, so Cove goes on too).
// An entry point that answers from another one for coupled files: an
// uncoupled file's call still goes to the real library's own `fn`, never to
// another entry point (ncmpi_wait is not ncmpi_wait_all).
#define REAL_IF_UNCOUPLED(fn, ...) \
  if (find_file(ncid) == nullptr) return real_fn<decltype(&::fn)>(#fn)(__VA_ARGS__);

#define COUPLED(fn, ...)                                                 \
  File* f = find_file(ncid);                                             \
  if (f == nullptr) return real_fn<decltype(&::fn)>(#fn)(__VA_ARGS__);   \
  if (f->real_too) {                                                     \
    const int rc_ = real_fn<decltype(&::fn)>(#fn)(__VA_ARGS__);          \
    if (rc_ != NC_NOERR && rc_ != NC_ERANGE) return rc_;                 \
  }

