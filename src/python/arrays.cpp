#include "python/arrays.hpp"

#include "core/fail.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace nb = nanobind;

namespace cove::python {

using detail::fail;

namespace {

// DLPack's device type of plain host memory (kDLCPU), and of host memory
// pinned by CUDA (kDLCUDAHost), which is host memory too.
constexpr int kDlpackCpu = 1;
constexpr int kDlpackCudaHost = 3;

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

[[noreturn]] void device_array(nb::handle obj, const char* what) {
  throw nb::type_error((std::string(what) + ": a " + type_of(obj) +
                        " in device (GPU) memory; the Python binding takes host arrays only for now "
                        "(the C and C++ APIs take device pointers, docs/gpu.md)")
                           .c_str());
}

// Refuses device arrays before anything imports them, with the reason.
void refuse_device_arrays(nb::handle obj, const char* what) {
  if (nb::hasattr(obj, "__cuda_array_interface__")) device_array(obj, what);
  if (!nb::hasattr(obj, "__dlpack_device__")) return;
  nb::object device;
  try {
    device = obj.attr("__dlpack_device__")();
  } catch (const nb::python_error&) {
    return;  // the import below reports what is wrong
  }
  const int type = nb::cast<int>(device[0]);
  if (type != kDlpackCpu && type != kDlpackCudaHost) device_array(obj, what);
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
  if (array.device_type() != kDlpackCpu && array.device_type() != kDlpackCudaHost) device_array(obj, what);
  ArrayView view;
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
  return view;
}

}  // namespace

ArrayView import_array(nb::handle obj, bool writable, const char* what) {
  refuse_device_arrays(obj, what);
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
