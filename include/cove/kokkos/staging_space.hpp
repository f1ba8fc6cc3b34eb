// cove::StagingSpace: a Kokkos memory space whose contents live in Cove's
// staging servers, not in this process (Kokkos 3.4; docs/kokkos.md).
//
// A View in StagingSpace names a Cove variable (its label) and holds the
// variable's settings: version, bounding box, the layout it is bound to
// read (cove/kokkos.hpp). Its allocation is address space reserved without
// access (PROT_NONE) and never touched: touching an element of a staging
// view from the host faults at once, where it would otherwise read
// meaningless bytes. Data moves only by Kokkos::deep_copy to and from host
// views, which are Cove puts and gets.
//
// The Kokkos::Impl specializations below are what Kokkos asks of a memory
// space: a SharedAllocationRecord (per allocation; its value functor is a
// no-op, as there are no values here to construct), MemorySpaceAccess
// (deep-copyable to and from HostSpace, not accessible from either side),
// and DeepCopy to and from HostSpace for the contiguous, same-layout copies
// Kokkos hands down as bytes.
//
// Ownership: the record owns the reservation and the settings; copies and
// subviews of a view share them, and the last one frees them.
// Thread-safety: allocation and deallocation may run on any thread.
// Errors: allocate throws Kokkos::Experimental::RawMemoryAllocationFailure
// like HostSpace; the DeepCopy specializations throw cove::Error (see
// cove/kokkos.hpp).
#pragma once

#include <cove/kokkos_export.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

#if defined(KOKKOS_ENABLE_DEBUG)
#error "cove::StagingSpace supports Kokkos built without KOKKOS_ENABLE_DEBUG (its records have no debug list)"
#endif

namespace cove {

class COVE_KOKKOS_EXPORT StagingSpace {
 public:
  using memory_space = StagingSpace;
  using execution_space = Kokkos::DefaultHostExecutionSpace;
  using size_type = std::size_t;
  using device_type = Kokkos::Device<execution_space, memory_space>;

  StagingSpace() = default;

  // Reserves `bytes` of address space that may not be touched (untracked).
  void* allocate(std::size_t bytes) const;
  void* allocate(const char* label, std::size_t bytes, std::size_t logical_bytes = 0) const;
  void deallocate(void* ptr, std::size_t bytes) const;
  void deallocate(const char* label, void* ptr, std::size_t bytes, std::size_t logical_bytes = 0) const;

  static constexpr const char* name() { return "CoveStaging"; }
};

namespace kokkos::detail {

// What Kokkos' allocation records need from the compiled part: a
// reservation of `bytes` after a writable header page, entered with its
// label (the variable's name) among the staging allocations, and its
// release.
COVE_KOKKOS_EXPORT Kokkos::Impl::SharedAllocationHeader* reserve(const std::string& label, std::size_t bytes);
COVE_KOKKOS_EXPORT void unreserve(Kokkos::Impl::SharedAllocationHeader* header, std::size_t bytes) noexcept;

// The bytes of a whole staging view to or from host memory laid out as the
// staging view is (cove/kokkos.hpp: put and get).
COVE_KOKKOS_EXPORT void put_bytes(const void* staging, const void* host, std::size_t bytes);
COVE_KOKKOS_EXPORT void get_bytes(const void* staging, void* host, std::size_t bytes);

// Stands in for a View's value functor: staging memory holds no values.
struct NoValues {
  NoValues() = default;
  template <class Functor>
  NoValues& operator=(const Functor&) noexcept {
    return *this;
  }
  void construct_shared_allocation() noexcept {}
  void destroy_shared_allocation() noexcept {}
};

}  // namespace kokkos::detail
}  // namespace cove

namespace Kokkos::Impl {

template <>
class SharedAllocationRecord<cove::StagingSpace, void> : public SharedAllocationRecord<void, void> {
  using RecordBase = SharedAllocationRecord<void, void>;

 public:
  SharedAllocationRecord(const SharedAllocationRecord&) = delete;
  SharedAllocationRecord& operator=(const SharedAllocationRecord&) = delete;

  std::string get_label() const override { return label_; }

  static SharedAllocationRecord* allocate(const cove::StagingSpace& space, const std::string& label,
                                          std::size_t bytes) {
    return new SharedAllocationRecord(space, label, bytes);
  }
  static void* allocate_tracked(const cove::StagingSpace& space, const std::string& label, std::size_t bytes) {
    if (bytes == 0) return nullptr;
    auto* record = allocate(space, label, bytes);
    RecordBase::increment(record);
    return record->data();
  }
  static void deallocate_tracked(void* ptr) {
    if (ptr != nullptr) RecordBase::decrement(get_record(ptr));
  }
  // `ptr` must be what allocate_tracked() returned (the header before it is readable).
  static SharedAllocationRecord* get_record(void* ptr) {
    const SharedAllocationHeader* header = ptr ? SharedAllocationHeader::get_header(ptr) : nullptr;
    if (header == nullptr || header->m_record->head() != header)
      Kokkos::Impl::throw_runtime_exception("cove::StagingSpace: get_record() of memory that is not a staging allocation");
    return static_cast<SharedAllocationRecord*>(header->m_record);
  }

 protected:
  SharedAllocationRecord(const cove::StagingSpace&, const std::string& label, std::size_t bytes)
      : RecordBase(cove::kokkos::detail::reserve(label, bytes), sizeof(SharedAllocationHeader) + bytes, &deallocate),
        label_(label) {
    m_alloc_ptr->m_record = this;
    label.copy(m_alloc_ptr->m_label, SharedAllocationHeader::maximum_label_length - 1);
    m_alloc_ptr->m_label[std::min(label.size(), std::size_t{SharedAllocationHeader::maximum_label_length - 1})] = '\0';
  }
  ~SharedAllocationRecord() override { cove::kokkos::detail::unreserve(m_alloc_ptr, size()); }

 private:
  static void deallocate(RecordBase* record) { delete static_cast<SharedAllocationRecord*>(record); }

  std::string label_;
};

// The record of a View's allocation, whatever its value functor.
template <class DestroyFunctor>
class SharedAllocationRecord<cove::StagingSpace, DestroyFunctor>
    : public SharedAllocationRecord<cove::StagingSpace, void> {
  using Base = SharedAllocationRecord<cove::StagingSpace, void>;

 public:
  cove::kokkos::detail::NoValues m_destroy;

  static SharedAllocationRecord* allocate(const cove::StagingSpace& space, const std::string& label,
                                          std::size_t bytes) {
    return new SharedAllocationRecord(space, label, bytes);
  }

 private:
  SharedAllocationRecord(const cove::StagingSpace& space, const std::string& label, std::size_t bytes)
      : Base(space, label, bytes) {}
};

template <>
struct MemorySpaceAccess<Kokkos::HostSpace, cove::StagingSpace> {
  enum : bool { assignable = false };
  enum : bool { accessible = false };
  enum : bool { deepcopy = true };
};

template <>
struct MemorySpaceAccess<cove::StagingSpace, Kokkos::HostSpace> {
  enum : bool { assignable = false };
  enum : bool { accessible = false };
  enum : bool { deepcopy = true };
};

template <class ExecutionSpace>
struct DeepCopy<cove::StagingSpace, Kokkos::HostSpace, ExecutionSpace> {
  DeepCopy(void* dst, const void* src, std::size_t n) { cove::kokkos::detail::put_bytes(dst, src, n); }
  DeepCopy(const ExecutionSpace& exec, void* dst, const void* src, std::size_t n) {
    exec.fence();
    cove::kokkos::detail::put_bytes(dst, src, n);
  }
};

template <class ExecutionSpace>
struct DeepCopy<Kokkos::HostSpace, cove::StagingSpace, ExecutionSpace> {
  DeepCopy(void* dst, const void* src, std::size_t n) { cove::kokkos::detail::get_bytes(src, dst, n); }
  DeepCopy(const ExecutionSpace& exec, void* dst, const void* src, std::size_t n) {
    exec.fence();
    cove::kokkos::detail::get_bytes(src, dst, n);
  }
};

}  // namespace Kokkos::Impl
