// libcove's side of CUDA (device.hpp): the plugin's loading, pointer
// lookup, and the RAII helpers.
#include "gpu/device.hpp"

#include "common/log.hpp"
#include "core/fail.hpp"
#include "gpu/device_key.hpp"
#include "net/segment.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>
#include <utility>

namespace cove::gpu {
namespace {

using detail::fail;

std::vector<std::string> plugin_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("COVE_CUDA_PLUGIN"); env && *env) out.emplace_back(env);
  // Beside the library (or program) this code is linked into, then the
  // build tree's and the install's library folders.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_candidates), &info) && info.dli_fname)
    out.push_back((std::filesystem::path(info.dli_fname).parent_path() / "libcove-cuda.so").string());
#ifdef COVE_CUDA_PLUGIN_BUILD_PATH
  out.emplace_back(COVE_CUDA_PLUGIN_BUILD_PATH);
#endif
#ifdef COVE_CUDA_PLUGIN_INSTALL_PATH
  out.emplace_back(COVE_CUDA_PLUGIN_INSTALL_PATH);
#endif
  out.emplace_back("libcove-cuda.so");
  return out;
}

CudaRuntime* load() {
  if (const char* env = std::getenv("COVE_CUDA"); env && std::string(env) == "0") return nullptr;
  for (const auto& path : plugin_candidates()) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      log::debug("CUDA plugin {}: {}", path, ::dlerror());
      continue;
    }
    auto entry = reinterpret_cast<CoveCudaRuntimeEntry>(::dlsym(h, "cove_cuda_runtime_v1"));
    if (!entry) {
      log::warn("{} is not a Cove CUDA plugin (no cove_cuda_runtime_v1)", path);
      continue;
    }
    CudaRuntime* rt = entry();
    if (rt->devices() <= 0) {
      log::debug("CUDA plugin {} loaded, but no GPU is visible", path);
      return nullptr;
    }
    log::debug("CUDA plugin {}: {} device(s)", path, rt->devices());
    return rt;
  }
  return nullptr;
}

// Whether this process has loaded the CUDA driver: without it, no memory
// of the process is device memory. Asked on every put and get: dlopen, even
// with RTLD_NOLOAD, searches the library path for a name it has not loaded
// (about 10 us, half of a small in-process put), so the answer "absent" is
// kept until the process loads another object (dlpi_adds counts them).
bool driver_loaded() {
  static std::atomic<bool> seen{false};
  static std::atomic<unsigned long long> absent_at{~0ull};  // objects loaded when it was last found absent
  if (seen.load(std::memory_order_relaxed)) return true;
  unsigned long long loaded = 0;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the first object carries the count
      },
      &loaded);
  if (loaded == absent_at.load(std::memory_order_relaxed)) return false;
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) {
    absent_at.store(loaded, std::memory_order_relaxed);
    return false;
  }
  ::dlclose(h);
  seen.store(true, std::memory_order_relaxed);
  return true;
}

// Whether the CUDA driver, already loaded by the program, knows `p` as
// device or managed memory (cuPointerGetAttribute, looked up in the loaded
// driver: libcove links no CUDA).
bool driver_says_device(const void* p) {
  using GetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);
  static const auto get = [] {
    void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return h ? reinterpret_cast<GetAttribute>(::dlsym(h, "cuPointerGetAttribute")) : nullptr;
  }();
  if (!get) return false;
  constexpr int kMemoryType = 2;                  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
  constexpr unsigned kDevice = 2, kUnified = 4;   // CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_UNIFIED
  unsigned type = 0;
  if (get(&type, kMemoryType, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p))) != 0)
    return false;  // memory the driver does not know: host memory
  return type == kDevice || type == kUnified;
}

// Buffers given back, by capacity, for the next that asks (allocating
// pinned or device memory costs milliseconds, and a second for a GiB).
struct BufferCache {
  std::mutex mutex;
  std::multimap<std::size_t, std::byte*> free;
  std::size_t cached = 0;
  bool device = false;  // device memory, else pinned host memory

  // A buffer of at least `bytes`: a cached one not wastefully larger, or a new one.
  std::pair<std::byte*, std::size_t> take(std::size_t bytes) {
    {
      std::lock_guard lock(mutex);
      auto it = free.lower_bound(bytes);
      if (it != free.end() && it->first <= 2 * bytes + (std::size_t{1} << 20)) {
        const auto out = std::make_pair(it->second, it->first);
        cached -= it->first;
        free.erase(it);
        return out;
      }
    }
    const std::size_t capacity = std::max<std::size_t>(bytes, 4096);
    void* p = nullptr;
    if (device)
      check(require("device scratch memory").alloc_device(&p, capacity));
    else
      check(require("pinned memory").alloc_pinned(&p, capacity));
    return {static_cast<std::byte*>(p), capacity};
  }

  // Over the limit, the others go first, smallest first: the buffer just
  // given back is the one the next step of a workflow asks for again.
  void give_back(std::byte* p, std::size_t capacity) {
    std::lock_guard lock(mutex);
    const auto mine = free.emplace(capacity, p);
    cached += capacity;
    for (auto it = free.begin(); cached > kCachedBufferBytes && it != free.end();) {
      if (it == mine && free.size() > 1) {
        ++it;
        continue;
      }
      if (device)
        runtime()->free_device(it->second);
      else
        runtime()->free_pinned(it->second);
      cached -= it->first;
      it = free.erase(it);
    }
  }
};
BufferCache& buffer_cache(bool device) {
  // Never destroyed: buffers may be given back during exit.
  static auto* pinned = new BufferCache;
  static auto* on_device = [] {
    auto* c = new BufferCache;
    c->device = true;
    return c;
  }();
  return device ? *on_device : *pinned;
}

// Mappings registered with CUDA, by first byte: their lengths.
struct Registrations {
  std::mutex mutex;
  std::map<std::uintptr_t, std::size_t> ranges;
  bool warned = false;
};
Registrations& registrations() {
  static auto* r = new Registrations;  // never destroyed: mappings may go during exit
  return *r;
}

// net's unmap hook: registrations inside a mapping that goes, let go first.
void unregister_range(void* address, std::size_t length) {
  auto& r = registrations();
  const auto lo = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard lock(r.mutex);
  for (auto it = r.ranges.lower_bound(lo); it != r.ranges.end() && it->first < lo + length;) {
    runtime()->unregister_host(reinterpret_cast<void*>(it->first));
    it = r.ranges.erase(it);
  }
}

CudaRuntime* load_and_hook() {
  CudaRuntime* rt = load();
  if (rt) net::set_unmap_hook(&unregister_range);
  return rt;
}

}  // namespace

CudaRuntime* runtime() {
  static CudaRuntime* const rt = load_and_hook();
  return rt;
}

bool register_mapping(void* p, std::size_t bytes, bool read_only) {
  CudaRuntime& rt = require("host memory registration");
  auto& r = registrations();
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(r.mutex);
  // Registered already when a registered range holds it.
  auto it = r.ranges.upper_bound(at);
  if (it != r.ranges.begin() && std::prev(it)->first + std::prev(it)->second >= at + bytes) return true;
  if (const char* e = rt.register_host(p, bytes, read_only)) {
    if (!std::exchange(r.warned, true))
      log::info("device copies from shared memory go through CUDA's staging buffers: {}", e);
    return false;
  }
  r.ranges.emplace(at, bytes);
  return true;
}

CudaRuntime& require(const std::string& what) {
  CudaRuntime* rt = runtime();
  if (!rt)
    fail(Code::Unsupported, what,
         " was given device memory, but this Cove has no CUDA here (built without it, its plugin libcove-cuda.so "
         "did not load, no GPU is visible, or COVE_CUDA=0)");
  return *rt;
}

void check(const char* message) {
  if (message) fail(Code::Internal, "CUDA: ", message);
}

PointerInfo locate(const void* p, MemorySpace stated, const char* what) {
  switch (stated) {
    case MemorySpace::host: return {};
    case MemorySpace::device: {
      PointerInfo info = require(what).where(p);
      if (!on_device(info)) fail(Code::InvalidArgument, what, ": the buffer was stated as device memory but is not");
      return info;
    }
    case MemorySpace::automatic: break;
  }
  if (!p || !driver_loaded()) return {};
  if (CudaRuntime* rt = runtime()) return rt->where(p);
  // The process uses CUDA but Cove cannot (COVE_CUDA=0, or the plugin did
  // not load): the driver itself tells device memory apart, which is then
  // refused rather than read as host memory.
  if (driver_says_device(p))
    fail(Code::Unsupported, what,
         " was given device memory, but this Cove cannot use CUDA here (COVE_CUDA=0, or its plugin "
         "libcove-cuda.so did not load: COVE_LOG_LEVEL=debug says why)");
  return {};
}

StreamHandle::StreamHandle() { check(require("a stream").create_stream(&stream_)); }
StreamHandle::~StreamHandle() {
  (void)runtime()->synchronize(stream_);  // nothing may still run on buffers freed after this
  runtime()->destroy_stream(stream_);
}
void StreamHandle::synchronize() const { check(runtime()->synchronize(stream_)); }

PinnedBuffer::PinnedBuffer(std::size_t bytes) : size_(bytes) {
  std::tie(data_, capacity_) = buffer_cache(false).take(bytes);
}
PinnedBuffer::~PinnedBuffer() {
  if (data_) buffer_cache(false).give_back(data_, capacity_);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) { std::tie(data_, capacity_) = buffer_cache(true).take(bytes); }
DeviceBuffer::~DeviceBuffer() {
  if (data_) buffer_cache(true).give_back(data_, capacity_);
}

IpcMapping::IpcMapping(const IpcExport& e) : export_(e) {
  check(require("a piece in another process's device memory").ipc_open(e, &base_, &size_));
}
IpcMapping::~IpcMapping() { runtime()->ipc_close(base_); }

const std::byte* IpcMapping::at(std::uint64_t address, std::uint64_t length) const {
  if (address < export_.base || address - export_.base > size_ || length > size_ - (address - export_.base))
    fail(Code::InvalidArgument, "device memory [0x", std::hex, address, ", +0x", length, std::dec,
         ") is not inside the ", size_, "-byte allocation its CUDA IPC handle maps");
  return static_cast<const std::byte*>(base_) + (address - export_.base);
}

HostRegistration::HostRegistration(void* p, std::size_t bytes, bool read_only) {
  check(require("host memory registration").register_host(p, bytes, read_only));
  p_ = p;
}
HostRegistration::~HostRegistration() {
  if (p_) runtime()->unregister_host(p_);
}

void copy_from_device_key(std::span<const std::byte> key, void* dst, std::size_t bytes) {
  const DeviceKey k = read_device_key(key);
  if (k.header.length != bytes)
    fail(Code::InvalidArgument, "a device memory key of ", k.header.length, " bytes was sent for a piece of ", bytes);
  CudaRuntime& rt = require("a server reading a writer's device memory");
  const IpcMapping mapping(k.allocation);
  // The piece's block (a shared-memory segment of its own) pinned once,
  // for the copy engine to write it directly.
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<std::uintptr_t>(dst) / page * page;
  const auto hi = (reinterpret_cast<std::uintptr_t>(dst) + bytes + page - 1) / page * page;
  register_mapping(reinterpret_cast<void*>(lo), hi - lo, false);
  check(rt.copy(dst, mapping.at(k.header.address, k.header.length), bytes, nullptr));
}

}  // namespace cove::gpu

namespace cove {

bool device_memory_available() { return gpu::runtime() != nullptr; }

void synchronize_device_stream(std::uintptr_t stream) {
  // cudaStreamLegacy is ((cudaStream_t)0x1): the same stream as 0 here.
  gpu::check(gpu::require("synchronize_device_stream").synchronize(
      stream == 1 ? nullptr : reinterpret_cast<gpu::Stream>(stream)));
}

namespace {
template <typename Path, std::size_t N>
Path parse_path(std::string_view name, const std::array<const char*, N>& names, const char* what) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<Path>(i);
  std::string known;
  for (const char* n : names) known += std::string(known.empty() ? "" : ", ") + n;
  detail::fail(Code::InvalidArgument, "unknown ", what, " path '", name, "' (known: ", known, ")");
}
constexpr std::array<const char*, 4> kSendNames{"automatic", "baseline", "pipeline", "direct"};
constexpr std::array<const char*, 4> kRecvNames{"automatic", "baseline", "hybrid", "direct"};
}  // namespace

DeviceSendPath parse_send_path(std::string_view name) {
  return parse_path<DeviceSendPath>(name, kSendNames, "device send");
}
DeviceRecvPath parse_recv_path(std::string_view name) {
  return parse_path<DeviceRecvPath>(name, kRecvNames, "device receive");
}
std::string to_string(DeviceSendPath path) { return kSendNames.at(static_cast<std::size_t>(path)); }
std::string to_string(DeviceRecvPath path) { return kRecvNames.at(static_cast<std::size_t>(path)); }

}  // namespace cove
