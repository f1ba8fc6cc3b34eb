// Shared by the heat-diffusion demo's two programs.
#pragma once

#include <cove/box.hpp>

#include <cstdint>
#include <cstring>

namespace demo {

constexpr const char* kField = "heat/temperature";
constexpr const char* kChecksum = "heat/checksum";  // metadata: the simulation's own checksum per step

// An order-independent, exact checksum: the sum over elements of a hash of
// (global index, bits of the value), wrapping mod 2^64. Both programs compute
// it over their own blocks and add the parts up, whatever the decomposition.
inline std::uint64_t element_hash(std::uint64_t global_index, double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  std::uint64_t x = bits ^ (global_index * 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

struct StepSummary {
  std::uint64_t checksum;
  double sum, min, max;
};

}  // namespace demo
