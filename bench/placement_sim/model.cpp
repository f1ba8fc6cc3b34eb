#include "model.hpp"

#include <cmath>

namespace cove::sim {
namespace {

std::uint64_t make_key(int depth, std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return (static_cast<std::uint64_t>(depth) << 60) | (static_cast<std::uint64_t>(x) << 40) |
         (static_cast<std::uint64_t>(y) << 20) | z;
}

std::uint64_t mix(std::uint64_t h) {  // splitmix64's finaliser
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

double unit(std::uint64_t h) { return static_cast<double>(mix(h) >> 11) * 0x1.0p-53; }

}  // namespace

std::uint64_t Mesh::ancestor(std::uint64_t key, int depth) {
  const int d = depth_of(key);
  const int up = d - depth;
  const auto x = static_cast<std::uint32_t>((key >> 40) & 0xfffff) >> up;
  const auto y = static_cast<std::uint32_t>((key >> 20) & 0xfffff) >> up;
  const auto z = static_cast<std::uint32_t>(key & 0xfffff) >> up;
  return make_key(depth, x, y, z);
}

std::vector<Block> Mesh::blocks(int step) {
  std::vector<Block> out;
  const std::uint32_t n = 1u << p_.min_depth;
  // Morton order at the base level, then depth first.
  for (std::uint32_t m = 0; m < n * n * n; ++m) {
    std::uint32_t x = 0, y = 0, z = 0;
    for (int b = 0; b < p_.min_depth; ++b) {
      x |= ((m >> (3 * b)) & 1u) << b;
      y |= ((m >> (3 * b + 1)) & 1u) << b;
      z |= ((m >> (3 * b + 2)) & 1u) << b;
    }
    refine(step, p_.min_depth, x, y, z, out);
  }
  for (Block& b : out) {
    auto [it, added] = ids_.emplace(b.key, static_cast<ObjectId>(ids_.size()));
    b.id = it->second;
  }
  return out;
}

void Mesh::refine(int step, int depth, std::uint32_t x, std::uint32_t y, std::uint32_t z, std::vector<Block>& out) {
  const double h = std::ldexp(1.0, -depth);
  bool near = false;
  if (depth < p_.max_depth) {
    const double radius =
        p_.feature_radius * (1.0 + p_.growth * static_cast<double>(step) / std::max(1, p_.steps)) * h + 0.87 * h;
    const double cx = (x + 0.5) * h, cy = (y + 0.5) * h, cz = (z + 0.5) * h;
    for (int f = 0; f < p_.features && !near; ++f) {
      // Features orbit the centre, each on its own circle and speed.
      const double phase = 2 * M_PI * unit(p_.seed * 1000 + static_cast<std::uint64_t>(f));
      const double speed = 0.02 + 0.02 * unit(p_.seed * 2000 + static_cast<std::uint64_t>(f));
      const double r = 0.15 + 0.25 * unit(p_.seed * 3000 + static_cast<std::uint64_t>(f));
      const double a = phase + speed * step;
      const double fx = 0.5 + r * std::cos(a), fy = 0.5 + r * std::sin(a);
      const double fz = 0.2 + 0.6 * unit(p_.seed * 4000 + static_cast<std::uint64_t>(f));
      near = std::hypot(cx - fx, cy - fy, cz - fz) < radius;
    }
  }
  if (!near) {
    out.push_back(Block{make_key(depth, x, y, z), depth, 0});
    return;
  }
  for (std::uint32_t c = 0; c < 8; ++c) {
    refine(step, depth + 1, 2 * x + (c & 1), 2 * y + ((c >> 1) & 1), 2 * z + ((c >> 2) & 1), out);
  }
}

double task_cost(const Params& p, double base, const Block& block, int step, int app) {
  const double level = std::ldexp(1.0, block.depth - p.min_depth);  // finer levels take more sub-steps
  const double u = unit(block.key ^ (static_cast<std::uint64_t>(step) << 8) ^ static_cast<std::uint64_t>(app) ^
                        (p.seed << 32));
  return base * level * (1.0 + p.noise * u);
}

}  // namespace cove::sim
