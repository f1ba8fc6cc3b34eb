// A dynamic spatial index of boxes: insert a box with a 64-bit payload,
// remove it, and find every stored box that intersects a query box.
//
// It is an R-tree (nodes of up to 31 entries, R*-style splits that minimise overlap). For
// boxes that overlap little — the pieces of a decomposed array, which is
// what Cove stores — a query costs O(log n + k) for k hits; heavily
// overlapping boxes degrade it towards O(n), as for any R-tree.
// The same (box, payload) pair may be inserted more than once; each remove()
// takes out one copy.
//
// Ownership: boxes are copied in; the index owns its nodes.
// Thread-safety: const functions may run concurrently with each other, but
// not with insert/remove/clear; callers serialise writers.
// Errors: InvalidArgument for a box whose rank differs from the index's, an
// invalid box, or (on insert) an empty box.
#pragma once

#include <cove/box.hpp>
#include <cove/export.hpp>
#include <cove/detail/function_ref.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace cove {

class COVE_EXPORT SpatialIndex {
 public:
  struct Hit {
    Box box;
    std::uint64_t payload;
  };

  explicit SpatialIndex(int ndim);  // 1..kMaxDims, else InvalidArgument
  ~SpatialIndex();
  SpatialIndex(SpatialIndex&&) noexcept;
  SpatialIndex& operator=(SpatialIndex&&) noexcept;

  int ndim() const noexcept;
  std::size_t size() const noexcept;
  int height() const noexcept;  // 1 for a single leaf

  void insert(const Box& box, std::uint64_t payload);
  // Removes one entry equal to (box, payload); false when there is none.
  bool remove(const Box& box, std::uint64_t payload);
  void clear();

  // Calls fn(box, payload) for every stored box intersecting `query`
  // (a non-empty common part; touching faces do not count). `fn` must not
  // modify the index.
  void query(const Box& query, detail::FunctionRef<void(const Box&, std::uint64_t)> fn) const;
  std::vector<Hit> query(const Box& query) const;

  // Verifies the tree's structure (for tests); throws Internal on a defect.
  void check_invariants() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cove
