// Internal: what libcove asks of CUDA, behind one interface.
//
// The CUDA code lives in a plugin, libcove-cuda.so (src/gpu/plugin/),
// built with nvcc against the CUDA runtime (static) and driver. libcove
// itself never links CUDA: gpu/device.cpp loads the plugin the first time
// a program may have handed it device memory, and a program that never
// loaded the CUDA driver cannot hold device memory, so host-only programs
// pay nothing (docs/gpu.md, "Finding where memory lives").
//
// The plugin returns a CudaRuntime from its one exported symbol,
// cove_cuda_runtime_v1. Every function that can fail returns null on
// success and otherwise a message naming the CUDA call and its error
// (valid until the next call on the same thread); the caller turns it
// into a cove::Error. Both sides are built by the same compiler and
// standard library, so the interface is a C++ class.
//
// Thread-safety: every function may be called from any thread. Streams
// belong to the caller that created them.
#pragma once

#include "gpu/plan.hpp"

#include <cstddef>
#include <cstdint>

namespace cove::gpu {

// Where a pointer's memory lives.
enum class Residence : std::uint8_t {
  Host,     // ordinary host memory (or memory CUDA does not know)
  Pinned,   // host memory registered with or allocated by CUDA
  Device,   // device memory (cudaMalloc)
  Managed,  // managed (unified) memory: treated as device memory
};

struct PointerInfo {
  Residence residence = Residence::Host;
  int device = -1;  // the device of Device and Managed memory
};

// A device allocation exported for another process (CUDA IPC).
struct IpcExport {
  unsigned char handle[64];      // cudaIpcMemHandle_t
  std::uint64_t base = 0;        // the allocation's first byte in the exporter
  std::uint64_t size = 0;        // the allocation's length
  std::int64_t device = -1;      // 64 bits: the struct has no padding to leak into keys
};

using Stream = void*;  // a cudaStream_t; null is the legacy default stream

class CudaRuntime {
 public:
  virtual ~CudaRuntime() = default;

  // Devices usable by this process (0 where there is no driver or GPU).
  virtual int devices() = 0;
  virtual PointerInfo where(const void* p) = 0;
  virtual const char* set_device(int device) = 0;
  virtual int current_device() = 0;

  // Copies between any two kinds of memory (cudaMemcpyDefault). With a
  // stream it is asynchronous; without one it returns when done.
  virtual const char* copy(void* dst, const void* src, std::size_t bytes, Stream stream) = 0;
  virtual const char* create_stream(Stream* stream) = 0;
  virtual void destroy_stream(Stream stream) = 0;
  virtual const char* synchronize(Stream stream) = 0;

  virtual const char* alloc_pinned(void** p, std::size_t bytes) = 0;
  virtual void free_pinned(void* p) = 0;
  virtual const char* alloc_device(void** p, std::size_t bytes) = 0;
  virtual void free_device(void* p) = 0;
  // Pins host memory that stays mapped until unregister_host() (read-only
  // memory with `read_only`, where the device allows it).
  virtual const char* register_host(void* p, std::size_t bytes, bool read_only) = 0;
  virtual void unregister_host(void* p) = 0;

  // The allocation holding device pointer p, exported for another process.
  virtual const char* ipc_export(const void* p, IpcExport* out) = 0;
  // Maps an allocation another process exported; *size is its length as
  // the driver knows it (never what the exporter claims).
  virtual const char* ipc_open(const IpcExport& e, void** base, std::size_t* size) = 0;
  virtual void ipc_close(void* base) = 0;

  // Assembles `count` pieces (plan.hpp) in one kernel launch on `stream`;
  // every pointer in them is device memory, or host memory the device can
  // reach (pinned and mapped).
  virtual const char* reassemble(const DevicePlan* plans, int count, Stream stream) = 0;
};

}  // namespace cove::gpu

extern "C" {
// The plugin's entry point: a runtime that lives as long as the process.
using CoveCudaRuntimeEntry = cove::gpu::CudaRuntime* (*)();
}
