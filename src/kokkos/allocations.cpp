// Staging memory: reserved address space with no access, after one
// writable page for Kokkos' allocation header (docs/kokkos.md).
#include "kokkos/allocations.hpp"

#include <cove/error.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <sstream>

namespace cove {
namespace {

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t bytes) { return (bytes + page_size() - 1) / page_size() * page_size(); }

// MAP_NORESERVE: a staging view of any size costs no memory.
void* map_none(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw Kokkos::Experimental::RawMemoryAllocationFailure(bytes, page_size());
  return p;
}

struct Table {
  std::mutex mutex;
  std::map<const void*, std::shared_ptr<kokkos::detail::Allocation>> by_data;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

void* StagingSpace::allocate(std::size_t bytes) const { return allocate("(unnamed)", bytes); }

void* StagingSpace::allocate(const char*, std::size_t bytes, std::size_t) const {
  return map_none(round_up(bytes == 0 ? 1 : bytes));
}

void StagingSpace::deallocate(void* ptr, std::size_t bytes) const { deallocate("", ptr, bytes); }

void StagingSpace::deallocate(const char*, void* ptr, std::size_t bytes, std::size_t) const {
  if (ptr != nullptr) munmap(ptr, round_up(bytes == 0 ? 1 : bytes));
}

namespace kokkos::detail {

Kokkos::Impl::SharedAllocationHeader* reserve(const std::string& label, std::size_t bytes) {
  using Header = Kokkos::Impl::SharedAllocationHeader;
  auto* base = static_cast<std::byte*>(map_none(page_size() + round_up(bytes)));
  if (mprotect(base, page_size(), PROT_READ | PROT_WRITE) != 0) {
    munmap(base, page_size() + round_up(bytes));
    throw Error(Code::NoMemory, "cove::StagingSpace: mprotect of the header page of '" + label + "' failed");
  }
  // The header ends where the page does, so the data starts page-aligned.
  auto* header = reinterpret_cast<Header*>(base + page_size() - sizeof(Header));
  auto allocation = std::make_shared<Allocation>();
  allocation->label = label;
  allocation->bytes = bytes;
  allocation->settings.variable = label;
  std::lock_guard lock(table().mutex);
  table().by_data[header + 1] = std::move(allocation);
  return header;
}

void unreserve(Kokkos::Impl::SharedAllocationHeader* header, std::size_t bytes) noexcept {
  {
    std::lock_guard lock(table().mutex);
    table().by_data.erase(header + 1);
  }
  munmap(reinterpret_cast<std::byte*>(header + 1) - page_size(), page_size() + round_up(bytes));
}

std::shared_ptr<Allocation> find_allocation(const void* data, const char* what) {
  {
    std::lock_guard lock(table().mutex);
    auto it = table().by_data.find(data);
    if (it != table().by_data.end()) return it->second;
  }
  std::ostringstream message;
  message << what << ": " << data
          << " is not the start of a cove::StagingSpace view (subviews of staging views are not supported)";
  throw Error(Code::InvalidArgument, message.str());
}

}  // namespace kokkos::detail
}  // namespace cove
