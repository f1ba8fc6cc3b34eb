#include "h5vol/type_ref.hpp"

#include "h5vol/errors.hpp"

namespace cove::h5vol {
namespace {
struct Decoded {
  int depth = 0;                 // CallScopes open on this thread
  std::uint64_t generation = 1;  // increases each time the decoded identifiers are closed
  std::vector<hid_t> ids;
};
Decoded& decoded() {
  thread_local Decoded d;
  return d;
}
}  // namespace

CallScope::CallScope() { ++decoded().depth; }
CallScope::~CallScope() {
  if (--decoded().depth == 0) release_decoded_types();
}

void release_decoded_types() {
  auto& d = decoded();
  ++d.generation;
  if (d.ids.empty()) return;
  // H5Tclose, as every HDF5 API call, clears the error stack: the errors
  // this call (or the native connector under it) pushed go back after it.
  const hid_t errors = H5Eget_current_stack();
  for (const hid_t id : d.ids) H5Tclose(id);
  d.ids.clear();
  if (errors >= 0) H5Eset_current_stack(errors);  // closes `errors` too
}

TypeRef::TypeRef(hid_t type) {
  const hid_t copy = check(H5Tcopy(type), "H5Tcopy");
  std::size_t n = 0;
  herr_t rc = H5Tencode(copy, nullptr, &n);
  if (rc >= 0) {
    encoded_.resize(n);
    rc = H5Tencode(copy, encoded_.data(), &n);
  }
  H5Tclose(copy);
  check(rc, "H5Tencode");
}

TypeRef TypeRef::from_encoded(std::vector<std::byte> encoded) {
  TypeRef t;
  t.encoded_ = std::move(encoded);
  check(t.get(), "H5Tdecode of a stored type");  // a bad encoding fails here, not at its first use
  return t;
}

hid_t TypeRef::get() const {
  if (encoded_.empty()) return H5I_INVALID_HID;
  auto& d = decoded();
  if (id_ >= 0 && generation_ == d.generation) return id_;
  id_ = check(H5Tdecode(encoded_.data()), "H5Tdecode");
  generation_ = d.generation;
  d.ids.push_back(id_);
  return id_;
}

}  // namespace cove::h5vol
