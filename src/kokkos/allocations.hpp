// The staging allocations of this process, by data pointer: each one's
// label and size, and the settings the cove/kokkos.hpp calls give it.
// Thread-safety: the table is locked; an allocation's settings are guarded
// by its own mutex.
#pragma once

#include <cove/kokkos.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cove::kokkos::detail {

struct Settings {
  std::string variable;                  // the label, or the label of the view bound to
  std::uint64_t version = 0;
  std::optional<std::array<Index, 8>> lower, upper;  // inclusive
  std::optional<std::int64_t> timeout_ms;
  std::vector<std::byte> fill;           // the variable's fill value (set_fill); empty: none
  std::optional<ViewShape> shape;        // from the last typed call
};

struct Allocation {
  std::string label;
  std::size_t bytes;  // as Kokkos asked: the span's bytes rounded up to 8
  std::mutex mutex;
  Settings settings;
};

// The allocation whose data starts at `data`; InvalidArgument, naming
// `what`, for a pointer that is not the start of one (a subview).
std::shared_ptr<Allocation> find_allocation(const void* data, const char* what);

}  // namespace cove::kokkos::detail
