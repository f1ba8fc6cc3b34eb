// Internal: the memory key of device memory (CUDA IPC), which a writer
// puts in place of a transport's key when the server (put, direct path) or
// the readers (put_local) are to read its GPU memory themselves.
//
//   KeyHeader (40 bytes; region has kDeviceBit) | "CUDAIPC1" | IpcExport
//
// The header's address and length are the piece's bytes in the writer's
// device address space; the export names the allocation holding them. A
// reader opens the handle, and IpcMapping checks the bytes against the
// allocation the driver actually maps, never the writer's word for it.
// Errors: InvalidArgument for a malformed key.
#pragma once

#include "core/fail.hpp"
#include "gpu/runtime.hpp"
#include "net/memory_key.hpp"

#include <cstring>

namespace cove::gpu {

inline constexpr std::uint64_t kDeviceBit = std::uint64_t{1} << 62;
inline constexpr char kDeviceKeyMagic[8] = {'C', 'U', 'D', 'A', 'I', 'P', 'C', '1'};

struct DeviceKey {
  net::KeyHeader header;
  IpcExport allocation;
};

inline bool is_device_key(std::span<const std::byte> key) {
  if (key.size() < sizeof(net::KeyHeader)) return false;
  net::KeyHeader h;
  std::memcpy(&h, key.data(), sizeof h);
  return (h.region & kDeviceBit) != 0;
}

inline net::Bytes make_device_key(const void* data, std::size_t bytes, const IpcExport& allocation,
                                  std::uint64_t pid) {
  net::Bytes extra(sizeof kDeviceKeyMagic + sizeof allocation);
  std::memcpy(extra.data(), kDeviceKeyMagic, sizeof kDeviceKeyMagic);
  std::memcpy(extra.data() + sizeof kDeviceKeyMagic, &allocation, sizeof allocation);
  return net::make_key({reinterpret_cast<std::uint64_t>(data), bytes, kDeviceBit, pid}, extra);
}

inline DeviceKey read_device_key(std::span<const std::byte> key) {
  DeviceKey k;
  k.header = net::read_key_header(key);
  constexpr std::size_t size = sizeof(net::KeyHeader) + sizeof kDeviceKeyMagic + sizeof(IpcExport);
  if (!(k.header.region & kDeviceBit) || key.size() != size ||
      std::memcmp(key.data() + sizeof(net::KeyHeader), kDeviceKeyMagic, sizeof kDeviceKeyMagic) != 0)
    detail::fail(Code::InvalidArgument, "a device memory key of ", key.size(), " bytes is malformed (", size,
                 " expected, with the CUDA IPC magic)");
  std::memcpy(&k.allocation, key.data() + sizeof(net::KeyHeader) + sizeof kDeviceKeyMagic, sizeof k.allocation);
  return k;
}

}  // namespace cove::gpu
