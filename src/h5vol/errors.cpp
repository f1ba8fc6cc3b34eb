#include "h5vol/errors.hpp"

#include <cstdio>
#include <cstdlib>

namespace cove::h5vol {
namespace {
hid_t error_class = H5I_INVALID_HID;
hid_t major_msg = H5I_INVALID_HID;
hid_t minor_msg = H5I_INVALID_HID;
}  // namespace

void fail(const std::string& message) { throw Failure(message); }

void keep_hdf5_messages_alive() {
  // 128 Ki references, taken once (H5Iget_ref counts only those taken
  // through H5Iinc_ref): each refusal's clear drops one of HDF5's own count,
  // so a process survives that many refusals.
  constexpr int low = 1 << 16, high = 1 << 17;
  const int refs = H5Iget_ref(H5E_VOL);
  if (refs < 0 || refs >= low) return;
  for (int i = refs; i < high; ++i) H5Iinc_ref(H5E_VOL);
}

void register_error_class() {
  if (error_class >= 0) return;
  error_class = H5Eregister_class("Cove VOL connector", "cove", "1.0");
  major_msg = H5Ecreate_msg(error_class, H5E_MAJOR, "Cove VOL connector");
  minor_msg = H5Ecreate_msg(error_class, H5E_MINOR, "operation failed");
}

void unregister_error_class() {
  if (error_class < 0) return;
  H5Eclose_msg(minor_msg);
  H5Eclose_msg(major_msg);
  H5Eunregister_class(error_class);
  error_class = major_msg = minor_msg = H5I_INVALID_HID;
}

void push_error(const char* op, const std::string& message) {
  // For programs that silence HDF5's error printing (H5Eset_auto2 off).
  static const bool verbose = std::getenv("COVE_H5VOL_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "cove h5vol: %s: %s\n", op, message.c_str());
  if (error_class < 0) register_error_class();
  keep_hdf5_messages_alive();
  H5Epush2(H5E_DEFAULT, __FILE__, op, __LINE__, error_class, major_msg, minor_msg, "cove: %s: %s", op,
           message.c_str());
}

}  // namespace cove::h5vol
