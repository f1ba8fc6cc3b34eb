// Internal: libcove's side of CUDA: loading the plugin, telling device
// pointers from host ones, and the RAII pieces the data paths use.
//
// runtime() loads libcove-cuda.so once (COVE_CUDA_PLUGIN names another
// file); it is null when Cove was built without CUDA, the plugin or the
// driver cannot load, or no GPU is visible (COVE_CUDA=0 forces that).
// locate() costs nothing for host memory in a process that has not loaded
// the CUDA driver: such a process holds no device memory.
//
// Errors (cove::Error): Unsupported for device memory where there is no
// CUDA; Internal with the CUDA call's message when CUDA fails.
// Thread-safety: everything here may be used from any thread.
#pragma once

#include <cove/memory.hpp>

#include "gpu/runtime.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace cove::gpu {

CudaRuntime* runtime();
// runtime(), or Unsupported naming `what` (the operation given device memory).
CudaRuntime& require(const std::string& what);
// Throws Internal with `message` when it is not null.
void check(const char* message);

// Where `p` lives, as stated or (automatic) as found. Unsupported when
// stated as device memory without CUDA.
PointerInfo locate(const void* p, MemorySpace stated, const char* what);
inline bool on_device(const PointerInfo& info) {
  return info.residence == Residence::Device || info.residence == Residence::Managed;
}

// A stream of the calling thread's device, waited for and destroyed with
// this: declare it after the buffers its work uses.
class StreamHandle {
 public:
  StreamHandle();
  ~StreamHandle();
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  Stream get() const { return stream_; }
  void synchronize() const;

 private:
  Stream stream_ = nullptr;
};

// Pinned host memory and device memory for one operation, taken from a
// process-wide cache of each and given back to it (up to this much of each
// stays allocated): allocating costs milliseconds, and a second for a GiB.
inline constexpr std::size_t kCachedBufferBytes = std::size_t{2} << 30;

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;      // what was asked
  std::size_t capacity_ = 0;  // what was allocated
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// Another process's device allocation mapped here (CUDA IPC), closed with
// this. The exporter's claims are checked against what the driver maps.
class IpcMapping {
 public:
  explicit IpcMapping(const IpcExport& e);
  ~IpcMapping();
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  // The exporter's bytes [address, address + length) as a pointer here;
  // InvalidArgument when they are not inside the allocation.
  const std::byte* at(std::uint64_t address, std::uint64_t length) const;

 private:
  IpcExport export_;
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

// Host memory registered with CUDA (pinned in place) until this goes:
// attached to a shared-memory mapping so that it is unregistered before
// the mapping is unmapped.
class HostRegistration {
 public:
  HostRegistration(void* p, std::size_t bytes, bool read_only);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

 private:
  void* p_ = nullptr;
};

// Registers [p, p + bytes) of a shared-memory mapping with CUDA (pinned in
// place) so that copy engines reach it directly, once: it stays registered
// until the mapping is unmapped (net::set_unmap_hook). Returns false, and
// logs why once, when CUDA refuses: copies then go through CUDA's own
// staging, slower but the same bytes.
bool register_mapping(void* p, std::size_t bytes, bool read_only);

// Copies the `bytes` bytes a device memory key (device_key.hpp) names into
// host memory at `dst` (a server reading a writer's GPU memory for a direct
// put). Unsupported without CUDA; InvalidArgument when the key does not
// describe `bytes` bytes inside the allocation it maps.
void copy_from_device_key(std::span<const std::byte> key, void* dst, std::size_t bytes);

}  // namespace cove::gpu
