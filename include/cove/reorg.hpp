// Where Cove reorganizes data when a reader asks for a memory layout other
// than the one the writer put (the four placements of the Kokkos Staging
// Space paper, docs/layouts.md):
//   Rad    the reader reorganizes after the bytes arrive (the server does nothing);
//   Rasar  the server reorganizes on the first get that asks for a new layout,
//          keeps the result as a replica and serves later gets from it;
//   Rasia  the server reorganizes every piece into every expected layout as
//          soon as the piece arrives, in the background;
//   Sahr   self-adaptive: readers' access patterns (variable, layout, region)
//          are recorded; new versions are prepared for them in advance; a get
//          whose replica is not ready takes the source and reorganizes itself.
//
// The method in force for an operation is the client's (COVE_REORG), else
// the variable's (Client::define with VariableOptions), else the server
// group's (ServerOptions::reorg, `reorg` in the configuration).
// Thread-safety: plain functions. Errors: parse_reorg throws InvalidArgument
// naming the value.
#pragma once

#include <cove/export.hpp>

#include <cstdint>
#include <string_view>

namespace cove {

enum class Reorg : std::uint8_t { Rad = 1, Rasar = 2, Rasia = 3, Sahr = 4 };

// "rad", "rasar", "rasia", "sahr" (any case).
COVE_EXPORT Reorg parse_reorg(std::string_view name);
// The lower-case name.
COVE_EXPORT const char* reorg_name(Reorg method) noexcept;

}  // namespace cove
