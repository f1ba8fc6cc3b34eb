// libcove-cuda.so: the CudaRuntime (gpu/runtime.hpp) over the CUDA runtime
// and driver. Loaded by libcove (gpu/device.cpp) with dlopen; it exports
// one symbol, cove_cuda_runtime_v1.
#include "gpu/plugin/reassemble.hpp"
#include "gpu/runtime.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace cove::gpu {
namespace {

thread_local std::string last_error;

// Null for success, else "call: error name (message)", valid until the
// next failing call on this thread.
const char* check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return nullptr;
  (void)cudaGetLastError();  // reset the last (non-sticky) error: the next call starts clean
  last_error = std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return last_error.c_str();
}

const char* check(CUresult e, const char* call) {
  if (e == CUDA_SUCCESS) return nullptr;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(e, &name);
  cuGetErrorString(e, &text);
  last_error = std::string(call) + ": " + (name ? name : "?") + " (" + (text ? text : "?") + ")";
  return last_error.c_str();
}

class Runtime final : public CudaRuntime {
 public:
  int devices() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }

  PointerInfo where(const void* p) override {
    cudaPointerAttributes a{};
    PointerInfo info;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      (void)cudaGetLastError();
      return info;
    }
    switch (a.type) {
      case cudaMemoryTypeDevice: info.residence = Residence::Device; break;
      case cudaMemoryTypeManaged: info.residence = Residence::Managed; break;
      case cudaMemoryTypeHost: info.residence = Residence::Pinned; break;
      default: info.residence = Residence::Host; break;
    }
    info.device = a.device;
    return info;
  }

  const char* set_device(int device) override { return check(cudaSetDevice(device), "cudaSetDevice"); }
  int current_device() override {
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) (void)cudaGetLastError();
    return d;
  }

  const char* copy(void* dst, const void* src, std::size_t bytes, Stream stream) override {
    if (!stream) return check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
    return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)),
                 "cudaMemcpyAsync");
  }
  const char* create_stream(Stream* stream) override {
    cudaStream_t s = nullptr;
    const char* e = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    *stream = s;
    return e;
  }
  void destroy_stream(Stream stream) override {
    if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  }
  const char* synchronize(Stream stream) override {
    return check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  }

  const char* alloc_pinned(void** p, std::size_t bytes) override {
    return check(cudaHostAlloc(p, bytes, cudaHostAllocPortable), "cudaHostAlloc");
  }
  void free_pinned(void* p) override {
    if (p) cudaFreeHost(p);
  }
  const char* alloc_device(void** p, std::size_t bytes) override { return check(cudaMalloc(p, bytes), "cudaMalloc"); }
  void free_device(void* p) override {
    if (p) cudaFree(p);
  }
  const char* register_host(void* p, std::size_t bytes, bool read_only) override {
    unsigned flags = cudaHostRegisterPortable;
    if (read_only) flags |= cudaHostRegisterReadOnly;
    return check(cudaHostRegister(p, bytes, flags), "cudaHostRegister");
  }
  void unregister_host(void* p) override {
    if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
  }

  const char* ipc_export(const void* p, IpcExport* out) override {
    CUdeviceptr base = 0;
    std::size_t size = 0;
    if (const char* e = check(cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(p)),
                              "cuMemGetAddressRange"))
      return e;
    cudaIpcMemHandle_t h{};
    if (const char* e = check(cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)), "cudaIpcGetMemHandle"))
      return e;
    static_assert(sizeof h == sizeof out->handle);
    std::memcpy(out->handle, &h, sizeof h);
    out->base = base;
    out->size = size;
    out->device = where(p).device;
    return nullptr;
  }
  const char* ipc_open(const IpcExport& e, void** base, std::size_t* size) override {
    if (e.device >= 0 && e.device < devices())
      if (const char* err = set_device(static_cast<int>(e.device))) return err;
    cudaIpcMemHandle_t h{};
    std::memcpy(&h, e.handle, sizeof h);
    if (const char* err = check(cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"))
      return err;
    CUdeviceptr b = 0;
    if (const char* err = check(cuMemGetAddressRange(&b, size, reinterpret_cast<CUdeviceptr>(*base)),
                                "cuMemGetAddressRange")) {
      cudaIpcCloseMemHandle(*base);
      return err;
    }
    return nullptr;
  }
  void ipc_close(void* base) override {
    if (cudaIpcCloseMemHandle(base) != cudaSuccess) (void)cudaGetLastError();
  }

  const char* reassemble(const DevicePlan* plans, int count, Stream stream) override {
    return check(launch_reassembly(plans, count, static_cast<cudaStream_t>(stream)), "reassembly kernel");
  }
};

}  // namespace
}  // namespace cove::gpu

extern "C" __attribute__((visibility("default"))) cove::gpu::CudaRuntime* cove_cuda_runtime_v1() {
  static cove::gpu::Runtime runtime;
  return &runtime;
}
