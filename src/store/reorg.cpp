#include <cove/reorg.hpp>

#include "core/fail.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cove {

Reorg parse_reorg(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "rad") return Reorg::Rad;
  if (lower == "rasar") return Reorg::Rasar;
  if (lower == "rasia") return Reorg::Rasia;
  if (lower == "sahr") return Reorg::Sahr;
  detail::fail(Code::InvalidArgument, "reorganization method '", name, "' is not one of rad, rasar, rasia, sahr");
}

const char* reorg_name(Reorg method) noexcept {
  switch (method) {
    case Reorg::Rad: return "rad";
    case Reorg::Rasar: return "rasar";
    case Reorg::Rasia: return "rasia";
    case Reorg::Sahr: return "sahr";
  }
  return "?";
}

}  // namespace cove
