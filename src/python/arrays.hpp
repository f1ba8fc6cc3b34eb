// Arrays from Python, seen as Cove buffers: what put, put_local, put_async
// and get(out=...) receive, whether it came by the buffer protocol, by
// DLPack or by __array_interface__ (through numpy.asarray, which does not
// copy).
//
// Device (GPU) arrays come by DLPack (kDLCUDA, kDLCUDAManaged) or by
// __cuda_array_interface__ (CuPy, PyTorch, Numba): their view says
// MemorySpace::device, and the producer's stream (the interface's
// "stream"; for DLPack the legacy default stream, which producers make
// wait for their own) is synchronised before Cove reads or writes them.
//
// Errors (raised as cove exceptions): InvalidArgument for an array that is
// not dense (strides with gaps), a dtype Cove does not know, a masked or
// read-only array where Cove would write, or a rank of 0 or above Cove's
// limit; TypeError for an array on a device other than a CUDA GPU, or an
// object that is not an array at all. Call with the GIL held.
#pragma once

#include <cove/box.hpp>
#include <cove/dtype.hpp>
#include <cove/layout.hpp>
#include <cove/memory.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <vector>

namespace cove::python {

struct ArrayView {
  void* data = nullptr;
  std::size_t bytes = 0;
  std::vector<Index> shape;
  DType dtype;
  Layout layout;      // the memory order of the elements (C, F or a permutation)
  MemorySpace memory = MemorySpace::host;
  nanobind::object owner;  // keeps the memory alive: the imported array
};

// `what` names the argument in messages ("array", "out").
ArrayView import_array(nanobind::handle obj, bool writable, const char* what);

// The Cove dtype of a numpy dtype-like (np.float64, "f4", np.dtype(...)):
// InvalidArgument naming it when Cove has no such type.
DType dtype_of(nanobind::handle dtype_like);
// The numpy dtype of a Cove dtype.
nanobind::object numpy_dtype(DType dtype);

// The layout of a dense array of `shape` whose axes have these element
// strides; InvalidArgument (naming `what`) when the elements are not
// packed without gaps. Axes of extent 1 may have any stride.
Layout dense_layout(const std::vector<Index>& shape, const std::vector<Index>& strides, const char* what);

}  // namespace cove::python
