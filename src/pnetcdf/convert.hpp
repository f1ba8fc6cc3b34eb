// netCDF type conversion as PnetCDF 1.12 does it: values out of the
// target type's range become the target's fill value and the call returns
// NC_ERANGE, the others are converted (floating to integer truncates).
#pragma once

#include <mpi.h>
#include <pnetcdf.h>

#include <cstddef>

namespace cove::pnetcdf {

// The memory type of the `long` calls: 64-bit like NC_INT64, but PnetCDF
// fills its out-of-range values with NC_FILL_INT, as for int.
inline constexpr nc_type kMemLong = sizeof(long) == 8 ? 1000 : NC_INT;

// The memory type of a named MPI datatype (MPI_LONG: kMemLong); NC_NAT for
// one that is not an element type.
nc_type memory_type(MPI_Datatype t);
// Bytes of one element of an external or memory type; 0 for an unknown one.
std::size_t type_size(nc_type t);
// Whether `t` may be a variable's or attribute's type in a file created with
// `cmode`: NC_NOERR, NC_EBADTYPE (not a netCDF type: kMemLong is memory-only),
// or NC_ESTRICTCDF2 (a CDF-5 type in a CDF-1 or CDF-2 file).
int check_external(nc_type t, int cmode);
// NC_NOERR, NC_ERANGE, or NC_ECHAR (text with a number type). `raw_byte`:
// NC_BYTE <-> unsigned char without a range check, as CDF-1 and CDF-2 files do.
int convert(const void* src, nc_type from, void* dst, nc_type to, std::size_t n, bool raw_byte);

}  // namespace cove::pnetcdf
