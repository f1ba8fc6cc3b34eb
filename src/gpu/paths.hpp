// Internal: which path device bytes take (cove/memory.hpp), and the ring
// of pinned chunks the pipelined sender uses. Pure functions and a small
// schedule, tested on the CPU.
#pragma once

#include <cove/memory.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cove::gpu {

// What a put of device memory can use.
struct SendContext {
  std::size_t bytes = 0;
  bool put_local = false;  // the bytes stay with the writer
  bool inline_put = false; // small enough to travel inside the request
  bool segments = false;   // the server's memory is mapped here (one host, shared memory)
  bool same_host = false;  // the server (or the readers) are on this host: CUDA IPC reaches them
  bool direct_refused = false;  // the server said it cannot read device memory
};

// Below this a direct put is not worth opening an IPC handle for, and
// below kPipelineMin a pipeline not worth its chunks.
inline constexpr std::size_t kDirectMin = std::size_t{1} << 20;
inline constexpr std::size_t kPipelineChunk = std::size_t{4} << 20;
inline constexpr std::size_t kPipelineMin = 2 * kPipelineChunk;
inline constexpr int kPipelineSlots = 3;

// The path a put takes: the one asked for where it applies, else the best
// that does. put_local has two (baseline: a pinned copy the writer keeps
// until release; direct: the device memory itself), puts three.
inline DeviceSendPath choose_send(DeviceSendPath asked, const SendContext& c) {
  const bool direct_ok = c.same_host && !c.direct_refused && !c.inline_put;
  if (c.put_local) {
    if (asked == DeviceSendPath::baseline || asked == DeviceSendPath::pipeline || !c.same_host)
      return DeviceSendPath::baseline;
    return DeviceSendPath::direct;
  }
  const bool pipeline_ok = c.segments && !c.inline_put;
  switch (asked) {
    case DeviceSendPath::direct:
      if (direct_ok) return DeviceSendPath::direct;
      [[fallthrough]];
    case DeviceSendPath::pipeline:
      return pipeline_ok ? DeviceSendPath::pipeline : DeviceSendPath::baseline;
    case DeviceSendPath::baseline: return DeviceSendPath::baseline;
    case DeviceSendPath::automatic: break;
  }
  if (direct_ok && c.bytes >= kDirectMin) return DeviceSendPath::direct;
  if (pipeline_ok && c.bytes >= kPipelineMin) return DeviceSendPath::pipeline;
  return DeviceSendPath::baseline;
}

// Below this a get into device memory is assembled on the host.
inline constexpr std::size_t kDeviceAssemblyMin = std::size_t{1} << 20;

inline DeviceRecvPath choose_recv(DeviceRecvPath asked, std::size_t bytes) {
  if (asked != DeviceRecvPath::automatic) return asked;
  return bytes >= kDeviceAssemblyMin ? DeviceRecvPath::direct : DeviceRecvPath::baseline;
}

// The pipelined sender's schedule: `bytes` cut into chunks of `chunk`
// bytes, chunk c staged in slot c % slots. Fetches run `lookahead` chunks
// ahead of the one being consumed; a slot is fetched into again only after
// its previous chunk was consumed.
class ChunkRing {
 public:
  ChunkRing(std::size_t bytes, std::size_t chunk, int slots)
      : bytes_(bytes), chunk_(std::max<std::size_t>(chunk, 1)), slots_(std::max(slots, 2)) {}
  std::size_t chunks() const { return (bytes_ + chunk_ - 1) / chunk_; }
  int slots() const { return slots_; }
  int lookahead() const { return slots_ - 1; }
  int slot(std::size_t c) const { return static_cast<int>(c % static_cast<std::size_t>(slots_)); }
  std::size_t offset(std::size_t c) const { return c * chunk_; }
  std::size_t length(std::size_t c) const { return std::min(chunk_, bytes_ - c * chunk_); }

  // Runs the schedule: fetch(c, slot) starts chunk c's copy into its slot
  // (asynchronously), wait(c) waits for it, consume(c, slot) uses it.
  template <typename Fetch, typename Wait, typename Consume>
  void run(Fetch&& fetch, Wait&& wait, Consume&& consume) const {
    const std::size_t n = chunks();
    const std::size_t ahead = static_cast<std::size_t>(lookahead());
    for (std::size_t c = 0; c < std::min(n, ahead); ++c) fetch(c, slot(c));
    for (std::size_t c = 0; c < n; ++c) {
      wait(c);
      // Slot of c + ahead is that of c - 1, consumed in the last round.
      if (c + ahead < n) fetch(c + ahead, slot(c + ahead));
      consume(c, slot(c));
    }
  }

 private:
  std::size_t bytes_, chunk_;
  int slots_;
};

}  // namespace cove::gpu
