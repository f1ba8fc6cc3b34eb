// Where a coupled file's header and variables would lie in the file PnetCDF
// 1.12.3 would write: its header size and extent, each variable's offset,
// the record size, as its enddef computes them (ncmpio__enddef,
// NC_begins, ncmpio_hdr_len_NC), with the alignment hints it takes from
// the MPI_Info and PNETCDF_HINTS. The layout queries (inq_header_size,
// inq_varoffset, inq_recsize, ...) and vard's byte offsets answer from it.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace cove::pnetcdf {

struct Schema;

// PnetCDF's own hints of one open file (ncmpio_set_pnetcdf_hints): 0 for
// an alignment the program did not set, which the first enddef decides.
struct Hints {
  MPI_Offset h_align = 0;     // nc_header_align_size
  MPI_Offset fx_v_align = 0;  // nc_var_align_size
  MPI_Offset r_align = 0;     // nc_record_align_size
  MPI_Offset chunk = 262144;  // nc_header_read_chunk_size
  std::string swap = "auto";  // nc_in_place_swap
  MPI_Offset ibuf_size = 16777216;  // nc_ibuf_size
};

// What the last enddef laid out (all 0 before the first one): begin has one
// offset per variable defined then.
struct Layout {
  MPI_Offset xsz = 0;        // header size
  MPI_Offset begin_var = 0;  // header extent: where the first variable starts
  MPI_Offset begin_rec = 0;  // where the record variables start
  MPI_Offset recsize = 0;
  std::vector<MPI_Offset> begin;
};

// The program's info merged with PNETCDF_HINTS ("key=value;..."), which
// wins, as PnetCDF's create and open merge them: a new info the caller
// frees, or MPI_INFO_NULL when both are empty.
MPI_Info combine_env_hints(MPI_Info user);
// PnetCDF's hints read from an info (MPI_INFO_NULL: the defaults).
Hints read_hints(MPI_Info info);
// The hints as ncmpi_inq_file_info returns them, set into `info`.
void set_hint_values(MPI_Info info, const Hints& h);

// The bytes the header of `s` takes in its format.
MPI_Offset header_size(const Schema& s);
// The bytes a variable takes in the file (one record's for a record
// variable), padded to 4, as ncmpio_NC_var_shape64.
MPI_Offset var_len(const Schema& s, int varid);

// PnetCDF's enddef over `s`: the hints' alignments are fixed (h, from the
// arguments of ncmpi__enddef when the info set none), the variables' sizes
// checked for the format, then `layout` (the file's fields as the last
// enddef, even a failed one, left them) is laid out anew; no offset moves
// below `old`'s (the last successful enddef's, after a redef; nullptr for a
// new file). NC_EVARSIZE where PnetCDF's enddef fails (define mode goes
// on), with the fields PnetCDF had set by then; NC_EINTOVERFLOW for a
// header extent past 2^31-1, laid out (define mode ends, as in PnetCDF).
int lay_out(const Schema& s, Hints& h, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,
            MPI_Offset r_align, const Layout* old, Layout& layout);

}  // namespace cove::pnetcdf
