#include "python/arrays.hpp"

#include "core/fail.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

namespace nb = nanobind;

namespace cove::python {

using detail::fail;

namespace {

// DLPack's device types: plain host memory (kDLCPU), host memory pinned by
// CUDA (kDLCUDAHost), which is host memory too, and CUDA device and managed
// memory (kDLCUDA, kDLCUDAManaged).
constexpr int kDlpackCpu = 1;
constexpr int kDlpackCuda = 2;
constexpr int kDlpackCudaHost = 3;
constexpr int kDlpackCudaManaged = 13;

std::string type_of(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// str(obj), for messages.
std::string text_of(nb::handle obj) {
  nb::object s = nb::steal(PyObject_Str(obj.ptr()));
  if (!s.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return nb::cast<std::string>(s);
}

// The memory space of a DLPack device type; TypeError for devices Cove
// cannot read (ROCm, Metal, ...).
MemorySpace space_of(int device_type, nb::handle obj, const char* what) {
  switch (device_type) {
    case kDlpackCpu:
    case kDlpackCudaHost:
      return MemorySpace::host;
    case kDlpackCuda:
    case kDlpackCudaManaged:
      return MemorySpace::device;
    default:
      throw nb::type_error((std::string(what) + ": a " + type_of(obj) + " on DLPack device type " +
                            std::to_string(device_type) + "; Cove takes host memory and CUDA device memory")
                               .c_str());
  }
}

DType dtype_from_dlpack(nb::dlpack::dtype t, nb::handle obj, const char* what) {
  using DL = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    switch (static_cast<DL>(t.code)) {
      case DL::Bool:
        if (t.bits == 8) return DTypeKind::Bool;
        break;
      case DL::Int:
        if (t.bits == 8) return DTypeKind::Int8;
        if (t.bits == 16) return DTypeKind::Int16;
        if (t.bits == 32) return DTypeKind::Int32;
        if (t.bits == 64) return DTypeKind::Int64;
        break;
      case DL::UInt:
        if (t.bits == 8) return DTypeKind::UInt8;
        if (t.bits == 16) return DTypeKind::UInt16;
        if (t.bits == 32) return DTypeKind::UInt32;
        if (t.bits == 64) return DTypeKind::UInt64;
        break;
      case DL::Float:
        if (t.bits == 32) return DTypeKind::Float32;
        if (t.bits == 64) return DTypeKind::Float64;
        break;
      case DL::Complex:
        if (t.bits == 64) return DTypeKind::Complex64;
        if (t.bits == 128) return DTypeKind::Complex128;
        break;
      default:
        break;
    }
  }
  std::string described = nb::hasattr(obj, "dtype") ? text_of(obj.attr("dtype"))
                                                     : "code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits";
  fail(Code::InvalidArgument, what, ": dtype ", described,
       " is not one Cove knows (bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128)");
}

}  // namespace

Layout dense_layout(const std::vector<Index>& shape, const std::vector<Index>& strides, const char* what) {
  const int n = static_cast<int>(shape.size());
  // Axes from slowest to fastest; axes of extent 1 keep C order among
  // themselves, as their strides say nothing.
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const bool unit_a = shape[a] == 1, unit_b = shape[b] == 1;
    if (unit_a || unit_b) return false;
    return strides[a] > strides[b];
  });
  const bool empty = std::any_of(shape.begin(), shape.end(), [](Index e) { return e == 0; });
  if (!empty) {
    Index expect = 1;
    for (int i = n - 1; i >= 0; --i) {
      const int axis = order[static_cast<std::size_t>(i)];
      if (shape[axis] == 1) continue;
      if (strides[axis] != expect)
        fail(Code::InvalidArgument, what, " is not contiguous (axis ", axis, " has stride ", strides[axis],
             " elements where a packed array has ", expect, "); pass a contiguous copy (numpy.ascontiguousarray)");
      expect *= shape[axis];
    }
  }
  // Extent-1 axes may sit anywhere: place them so that C or F order is
  // recognised when the other axes follow it.
  std::vector<int> moving;
  for (int a : order)
    if (shape[a] != 1) moving.push_back(a);
  if (std::is_sorted(moving.begin(), moving.end())) return Layout::c();
  if (std::is_sorted(moving.rbegin(), moving.rend())) return Layout::f();
  std::vector<int> full;  // the moving axes in memory order, the unit ones first
  for (int a = 0; a < n; ++a)
    if (shape[a] == 1) full.push_back(a);
  full.insert(full.end(), moving.begin(), moving.end());
  return Layout::permuted(full);
}

namespace {

template <typename Array>
ArrayView view_of(const Array& array, nb::handle obj, nb::object source, const char* what) {
  ArrayView view;
  view.memory = space_of(array.device_type(), obj, what);
  view.dtype = dtype_from_dlpack(array.dtype(), source, what);
  const int n = static_cast<int>(array.ndim());
  if (n < 1 || n > kMaxDims) fail(Code::InvalidArgument, what, " has ", n, " dimensions; Cove takes 1..", kMaxDims);
  std::vector<Index> strides(static_cast<std::size_t>(n));
  view.shape.resize(static_cast<std::size_t>(n));
  Index packed = 1;
  for (int d = n - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    view.shape[i] = static_cast<Index>(array.shape(i));
    strides[i] = array.stride_ptr() ? array.stride(i) : packed;
    packed *= view.shape[i];
  }
  view.layout = dense_layout(view.shape, strides, what);
  view.data = const_cast<void*>(static_cast<const void*>(array.data()));
  view.bytes = array.nbytes();
  view.owner = std::move(source);
  // DLPack producers make the legacy default stream wait for their work
  // when the consumer names no stream (nanobind names none).
  if (view.memory == MemorySpace::device) synchronize_device_stream(0);
  return view;
}

// An int of a __cuda_array_interface__ dict, naming `what` when it is not one.
std::int64_t interface_int(nb::handle value, const char* what, const char* field) {
  if (!nb::isinstance<nb::int_>(value))
    fail(Code::InvalidArgument, what, ": __cuda_array_interface__ field ", field, " is ", text_of(value),
         ", not an int");
  return nb::cast<std::int64_t>(value);
}

// An array by the CUDA Array Interface (version 2 or 3): a dict with shape,
// typestr, data = (pointer, read-only), strides (bytes, or None for C
// order), mask (must be None) and stream (synchronised when given).
ArrayView view_of_interface(nb::handle obj, bool writable, const char* what) {
  nb::object cai = obj.attr("__cuda_array_interface__");
  if (!nb::isinstance<nb::dict>(cai))
    fail(Code::InvalidArgument, what, ": __cuda_array_interface__ is a ", type_of(cai), ", not a dict");
  nb::dict d = nb::borrow<nb::dict>(cai);
  for (const char* field : {"shape", "typestr", "data"})
    if (!d.contains(field)) fail(Code::InvalidArgument, what, ": __cuda_array_interface__ has no ", field);
  if (d.contains("mask") && !d["mask"].is_none())
    fail(Code::InvalidArgument, what, ": a masked device array (__cuda_array_interface__ mask); Cove takes plain ones");
  ArrayView view;
  view.memory = MemorySpace::device;
  const std::string typestr = nb::cast<std::string>(nb::str(d["typestr"]));
  try {
    view.dtype = DType::parse(typestr);
  } catch (const Error&) {
    fail(Code::InvalidArgument, what, ": dtype '", typestr,
         "' is not one Cove knows (bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128)");
  }
  nb::handle shape = d["shape"];
  if (!nb::isinstance<nb::tuple>(shape))
    fail(Code::InvalidArgument, what, ": __cuda_array_interface__ shape is ", text_of(shape), ", not a tuple");
  const int n = static_cast<int>(nb::len(shape));
  if (n < 1 || n > kMaxDims) fail(Code::InvalidArgument, what, " has ", n, " dimensions; Cove takes 1..", kMaxDims);
  view.shape.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    view.shape[static_cast<std::size_t>(i)] = interface_int(shape[static_cast<std::size_t>(i)], what, "shape");
    if (view.shape[static_cast<std::size_t>(i)] < 0) fail(Code::InvalidArgument, what, ": a negative extent");
  }
  const auto elem = static_cast<Index>(view.dtype.size());
  std::vector<Index> strides(static_cast<std::size_t>(n));
  Index packed = 1;
  for (int i = n - 1; i >= 0; --i) {
    strides[static_cast<std::size_t>(i)] = packed;
    packed *= view.shape[static_cast<std::size_t>(i)];
  }
  if (d.contains("strides") && !d["strides"].is_none()) {
    nb::handle given = d["strides"];
    if (!nb::isinstance<nb::tuple>(given) || static_cast<int>(nb::len(given)) != n)
      fail(Code::InvalidArgument, what, ": __cuda_array_interface__ strides ", text_of(given), " are not ", n, " ints");
    for (int i = 0; i < n; ++i) {
      const std::int64_t bytes = interface_int(given[static_cast<std::size_t>(i)], what, "strides");
      if (bytes % elem != 0)
        fail(Code::InvalidArgument, what, " is not contiguous (axis ", i, " has a stride of ", bytes,
             " bytes, not a multiple of the element size ", elem, ")");
      strides[static_cast<std::size_t>(i)] = bytes / elem;
    }
  }
  view.layout = dense_layout(view.shape, strides, what);
  nb::handle data = d["data"];
  if (!nb::isinstance<nb::tuple>(data) || nb::len(data) != 2)
    fail(Code::InvalidArgument, what, ": __cuda_array_interface__ data is ", text_of(data), ", not (pointer, read-only)");
  view.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(interface_int(data[0], what, "data")));
  if (writable && nb::cast<bool>(data[1])) fail(Code::InvalidArgument, what, " is read-only");
  view.bytes = static_cast<std::size_t>(packed) * static_cast<std::size_t>(elem);
  if (d.contains("stream") && !d["stream"].is_none()) {
    const std::int64_t stream = interface_int(d["stream"], what, "stream");
    if (stream == 0)
      fail(Code::InvalidArgument, what, ": __cuda_array_interface__ stream 0 is not allowed (the interface says 1 or 2 "
           "for the default streams)");
    synchronize_device_stream(static_cast<std::uintptr_t>(stream));
  }
  view.owner = nb::borrow(obj);
  return view;
}

}  // namespace

ArrayView import_array(nb::handle obj, bool writable, const char* what) {
  // Where a DLPack producer's memory is, before anything imports it: a
  // device Cove cannot read is refused by name.
  std::optional<MemorySpace> dlpack_space;
  if (nb::hasattr(obj, "__dlpack_device__")) {
    nb::object device;
    try {
      device = obj.attr("__dlpack_device__")();
    } catch (const nb::python_error&) {
      // the import below reports what is wrong
    }
    if (device.is_valid()) dlpack_space = space_of(nb::cast<int>(device[0]), obj, what);
  }
  // The CUDA Array Interface names the producer's stream: preferred for
  // device arrays that offer both (CuPy, PyTorch on a GPU).
  if (nb::hasattr(obj, "__cuda_array_interface__") && dlpack_space.value_or(MemorySpace::device) == MemorySpace::device)
    return view_of_interface(obj, writable, what);
  nb::object source = nb::borrow(obj);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (writable) {
      nb::ndarray<> array;
      if (nb::try_cast(source, array)) return view_of(array, obj, source, what);
    } else {
      nb::ndarray<nb::ro> array;
      if (nb::try_cast(source, array)) return view_of(array, obj, source, what);
    }
    // numpy.asarray wraps an __array_interface__ without copying.
    if (attempt > 0 || !nb::hasattr(obj, "__array_interface__")) break;
    source = nb::module_::import_("numpy").attr("asarray")(obj);
  }
  if (nb::hasattr(source, "dtype") && nb::hasattr(source, "shape")) {
    if (writable && nb::hasattr(source, "flags") && !nb::cast<bool>(source.attr("flags").attr("writeable")))
      fail(Code::InvalidArgument, what, " is read-only");
    fail(Code::InvalidArgument, what, ": dtype ", text_of(source.attr("dtype")),
         " is not one Cove knows (bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128)");
  }
  throw nb::type_error((std::string(what) + " must be an array (buffer protocol, __array_interface__ or DLPack), not " +
                        type_of(obj))
                           .c_str());
}

DType dtype_of(nb::handle dtype_like) {
  // A name Cove knows needs no numpy ("f4", "<f8", "int32").
  if (nb::isinstance<nb::str>(dtype_like)) try {
      return DType::parse(nb::cast<std::string>(dtype_like));
    } catch (const Error&) {
      // numpy knows more spellings ("float32", "double", "i")
    }
  nb::object dt;
  try {
    dt = nb::module_::import_("numpy").attr("dtype")(dtype_like);
  } catch (const nb::python_error& e) {
    fail(Code::InvalidArgument, "dtype ", text_of(dtype_like), " is not a dtype: ", e.what());
  }
  const std::string name = nb::cast<std::string>(dt.attr("str"));
  try {
    return DType::parse(name);
  } catch (const Error&) {
    fail(Code::InvalidArgument, "dtype ", text_of(dt), " ('", name,
         "') is not one Cove knows (bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128, "
         "or opaque 'V<size>')");
  }
}

nb::object numpy_dtype(DType dtype) { return nb::module_::import_("numpy").attr("dtype")(dtype.name()); }

}  // namespace cove::python
