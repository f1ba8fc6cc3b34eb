#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>

namespace cove::h5vol {

// A failure inside the connector; `what()` names the operation and the cause.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string& message);
// Throws Failure(message) when an HDF5 call returned a negative value (its
// own error entry stays on the stack below ours).
template <class T>
T check(T value, const char* message) {
  if (value < 0) fail(message);
  return value;
}

void register_error_class();
// HDF5 1.14's refusals of native-only calls (H5Rcreate and others) push an
// error whose minor code is the major message H5E_VOL; clearing that entry
// (at the next API call) drops a reference to H5E_VOL as if the entry held
// one, so after a few refusals the message is freed, every later clear of
// the stack fails and errors lose their entries (h5py: "Failed to extract
// top-level error description"). The connector keeps H5E_VOL referenced
// (topped up when it runs low), so the stack survives any number of refusals.
void keep_hdf5_messages_alive();
void unregister_error_class();
// Pushes "cove: <op>: <message>" on HDF5's default error stack.
void push_error(const char* op, const std::string& message);

// One call from HDF5 into the connector: the identifiers it decoded for
// its own use (type_ref.hpp) are closed when the outermost one ends.
struct CallScope {
  CallScope();
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
};

// Runs `body` (in a CallScope); on any exception pushes an error naming `op` and returns `failed`.
template <class R, class F>
R guarded(const char* op, R failed, F&& body) noexcept {
  CallScope scope;
  try {
    return body();
  } catch (const std::exception& e) {
    push_error(op, e.what());
  } catch (...) {
    push_error(op, "unknown exception");
  }
  return failed;
}

}  // namespace cove::h5vol
