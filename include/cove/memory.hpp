// Where the memory handed to put and get lives: host or GPU (docs/gpu.md).
//
// put, put_local, put_async, get and get_latest take device pointers as
// well as host ones. By default (MemorySpace::automatic) Cove finds out
// which it was given: a process that has not loaded the CUDA driver holds
// no device memory, so host programs pay nothing; otherwise CUDA is asked
// (cudaPointerGetAttributes). Stating it (host or device) skips the check.
//
// A Cove built without CUDA (or where its CUDA plugin cannot load, or no
// GPU is visible, or COVE_CUDA=0) keeps the same API: a pointer stated as
// device memory fails with Unsupported; an automatic one is host memory
// in a process that has not loaded the CUDA driver, and otherwise the
// driver is asked, and device memory fails with Unsupported too.
//
// How device bytes travel is chosen per call by size and availability,
// and can be forced (ConnectOptions, or COVE_GPU_SEND / COVE_GPU_RECV) for
// benchmarks:
//   sender   baseline  device -> pinned host buffer -> the ordinary put
//            pipeline  chunks copied on two streams into a ring of pinned
//                      buffers, overlapped with the copy into the server
//            direct    the server (put) or the reader (put_local) reads the
//                      device memory itself through a CUDA IPC handle in
//                      the piece's key: the writer copies nothing
//   receiver baseline  assembled on the host, then one copy to the device
//            hybrid    each piece through a pinned buffer to the device,
//                      assembled there by the reassembly kernel
//            direct    each piece straight from where it lies (a server's
//                      shared memory, or another GPU process's memory) to
//                      the device, assembled there by the kernel
// Thread-safety: plain values.
#pragma once

#include <cove/export.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace cove {

enum class MemorySpace : std::uint8_t { automatic, host, device };

enum class DeviceSendPath : std::uint8_t { automatic, baseline, pipeline, direct };
enum class DeviceRecvPath : std::uint8_t { automatic, baseline, hybrid, direct };

// "automatic", "baseline", "pipeline", "direct" (InvalidArgument naming the
// value otherwise), and back.
COVE_EXPORT DeviceSendPath parse_send_path(std::string_view name);
COVE_EXPORT DeviceRecvPath parse_recv_path(std::string_view name);
COVE_EXPORT std::string to_string(DeviceSendPath path);
COVE_EXPORT std::string to_string(DeviceRecvPath path);

// Whether this process can hand Cove device memory: Cove was built with
// CUDA, its plugin loads, and at least one GPU is visible. Loads the
// plugin (and so initialises CUDA) on first call.
COVE_EXPORT bool device_memory_available();

// Waits until the work queued so far on a CUDA stream of this process has
// finished: `stream` is a cudaStream_t as an integer (0 and 1 are CUDA's
// legacy default stream, 2 the per-thread one), as array producers hand
// it out (__cuda_array_interface__'s "stream"), so that Cove reads their
// device arrays only once they are written. Unsupported without CUDA here;
// Internal naming CUDA's error for a stream that is not one.
COVE_EXPORT void synchronize_device_stream(std::uintptr_t stream);

}  // namespace cove
