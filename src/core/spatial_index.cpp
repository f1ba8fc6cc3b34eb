#include <cove/spatial_index.hpp>

#include "core/box_checks.hpp"
#include "core/fail.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>
#include <numeric>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define COVE_HAVE_AVX2_KERNEL 1
#endif

namespace cove {

using detail::fail;

namespace {

// Node capacity: kSlots entries of which kMaxEntries in a settled tree; the
// last slot takes the overflowing entry until the node is split. 32 slots
// (eight AVX2 vectors of coordinates per dimension and side) measured
// better than 16 and 64 at 10^6 boxes: fewer levels, each a cache miss.
constexpr int kSlots = 32;
constexpr int kMaxEntries = kSlots - 1;
constexpr int kMinEntries = 12;  // ~40% of kMaxEntries, as R*-trees use

// A box as lo[0..nd) followed by hi[0..nd), for temporaries.
struct Bounds {
  std::array<Index, 2 * kMaxDims> v;
};

// Node storage in chunks that never move, so growing the index never
// copies it. Chunks double in size (1 node, then 2, 4, 8, ...): a small index
// (one version's few pieces) stays small, and the cost of allocating grows
// with the index. Chunks of 2 MiB and more ask for transparent huge pages:
// queries jump across a large pool, and with 4 KiB pages nearly every node
// visit would also be a TLB miss. (Asking for them on small chunks costs
// milliseconds of synchronous compaction in the kernel, for nothing.)
class NodePool {
 public:
  static constexpr std::uint32_t kFirstChunkNodes = 1;  // a power of two; 1: a version with a few pieces takes one node
  static constexpr int kFirstShift = std::countr_zero(kFirstChunkNodes);

  explicit NodePool(std::size_t words_per_node) : words_(words_per_node) {}
  ~NodePool() {
    for (Index* c : chunks_) std::free(c);
  }
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  std::uint32_t size() const noexcept { return size_; }
  // Chunk k holds ids [F << k - F, F << (k + 1) - F), F = kFirstChunkNodes.
  Index* at(std::uint32_t id) const noexcept {
    const std::uint64_t v = std::uint64_t{id} + kFirstChunkNodes;
    const int k = static_cast<int>(std::bit_width(v)) - 1 - kFirstShift;
    return chunks_[k] + (v - (std::uint64_t{kFirstChunkNodes} << k)) * words_;
  }
  std::uint32_t grow() {
    const std::uint64_t v = std::uint64_t{size_} + kFirstChunkNodes;
    const auto k = static_cast<std::size_t>(static_cast<int>(std::bit_width(v)) - 1 - kFirstShift);
    if (k == chunks_.size()) {
      const std::size_t bytes = (std::size_t{kFirstChunkNodes} << k) * words_ * sizeof(Index);
      void* p = nullptr;
      if (bytes >= kHugePage) {
        p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#ifdef MADV_HUGEPAGE
        if (p) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: refusal just means small pages
#endif
      } else {
        p = std::malloc(bytes);
      }
      if (!p) throw std::bad_alloc();
      chunks_.push_back(static_cast<Index*>(p));
    }
    return size_++;
  }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  std::size_t words_;
  std::uint32_t size_ = 0;
  std::vector<Index*> chunks_;
};

// Bit e set when entry e of a node intersects the query q (lo[nd], hi[nd]).
// lo and hi point at the node's [nd][kSlots] coordinate blocks.
std::uint64_t overlap_mask_scalar(const Index* lo, const Index* hi, const Index* q, int nd) {
  std::uint64_t mask = ~std::uint64_t{0};
  for (int d = 0; d < nd; ++d) {
    const Index qlo = q[d], qhi = q[nd + d];
    const Index* l = lo + d * kSlots;
    const Index* h = hi + d * kSlots;
    std::uint64_t m = 0;
    for (int e = 0; e < kSlots; ++e) m |= static_cast<std::uint64_t>((l[e] < qhi) & (qlo < h[e])) << e;
    mask &= m;
  }
  return mask;
}

#ifdef COVE_HAVE_AVX2_KERNEL
__attribute__((target("avx2"))) std::uint64_t overlap_mask_avx2(const Index* lo, const Index* hi, const Index* q,
                                                                 int nd) {
  __m256i all[kSlots / 4];
  for (auto& a : all) a = _mm256_set1_epi64x(-1);
  for (int d = 0; d < nd; ++d) {
    const __m256i qlo = _mm256_set1_epi64x(q[d]), qhi = _mm256_set1_epi64x(q[nd + d]);
    const Index* l = lo + d * kSlots;
    const Index* h = hi + d * kSlots;
    for (int v = 0; v < kSlots / 4; ++v) {
      const __m256i lv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + 4 * v));
      const __m256i hv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + 4 * v));
      all[v] = _mm256_and_si256(all[v], _mm256_and_si256(_mm256_cmpgt_epi64(qhi, lv), _mm256_cmpgt_epi64(hv, qlo)));
    }
  }
  std::uint64_t mask = 0;
  for (int v = 0; v < kSlots / 4; ++v)
    mask |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_castsi256_pd(all[v]))) << (4 * v);
  return mask;
}
#endif

// Bit e set when entry e contains the box b (lo[nd], hi[nd]).
std::uint64_t contain_mask_scalar(const Index* lo, const Index* hi, const Index* b, int nd) {
  std::uint64_t mask = ~std::uint64_t{0};
  for (int d = 0; d < nd; ++d) {
    const Index* l = lo + d * kSlots;
    const Index* h = hi + d * kSlots;
    std::uint64_t m = 0;
    for (int e = 0; e < kSlots; ++e) m |= static_cast<std::uint64_t>((l[e] <= b[d]) & (h[e] >= b[nd + d])) << e;
    mask &= m;
  }
  return mask;
}

#ifdef COVE_HAVE_AVX2_KERNEL
__attribute__((target("avx2"))) std::uint64_t contain_mask_avx2(const Index* lo, const Index* hi, const Index* b,
                                                                 int nd) {
  __m256i all[kSlots / 4];
  for (auto& a : all) a = _mm256_set1_epi64x(-1);
  for (int d = 0; d < nd; ++d) {
    const __m256i blo = _mm256_set1_epi64x(b[d]), bhi = _mm256_set1_epi64x(b[nd + d]);
    const Index* l = lo + d * kSlots;
    const Index* h = hi + d * kSlots;
    for (int v = 0; v < kSlots / 4; ++v) {
      const __m256i lv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + 4 * v));
      const __m256i hv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + 4 * v));
      // l <= blo and h >= bhi, as "not (l > blo) and not (bhi > h)"
      const __m256i bad = _mm256_or_si256(_mm256_cmpgt_epi64(lv, blo), _mm256_cmpgt_epi64(bhi, hv));
      all[v] = _mm256_andnot_si256(bad, all[v]);
    }
  }
  std::uint64_t mask = 0;
  for (int v = 0; v < kSlots / 4; ++v)
    mask |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_castsi256_pd(all[v]))) << (4 * v);
  return mask;
}
#endif

using OverlapFn = std::uint64_t (*)(const Index*, const Index*, const Index*, int);

OverlapFn pick_overlap_kernel() {
#ifdef COVE_HAVE_AVX2_KERNEL
  if (__builtin_cpu_supports("avx2")) return overlap_mask_avx2;
#endif
  return overlap_mask_scalar;
}

OverlapFn pick_contain_kernel() {
#ifdef COVE_HAVE_AVX2_KERNEL
  if (__builtin_cpu_supports("avx2")) return contain_mask_avx2;
#endif
  return contain_mask_scalar;
}

const OverlapFn overlap_mask = pick_overlap_kernel();
const OverlapFn contain_mask = pick_contain_kernel();

}  // namespace

// Nodes live in a pool of 64-bit words, each node a contiguous slab:
//   [level, count, ref[kSlots], lo[nd][kSlots], hi[nd][kSlots]]
// Coordinates are stored per dimension (structure of arrays) so that one
// node's entries are tested against a query together. refs are child node
// ids, or payloads at leaves (level 0).
struct SpatialIndex::Impl {
  static constexpr std::size_t kRefs = 2;
  static constexpr std::size_t kLo = kRefs + kSlots;

  int nd;
  std::size_t words;  // per node
  std::size_t size = 0;
  NodePool pool;
  std::vector<std::uint32_t> free_nodes;
  std::uint32_t root = 0;

  explicit Impl(int ndim) : nd(ndim), words(kLo + 2 * static_cast<std::size_t>(ndim) * kSlots), pool(words) {
    root = new_node(0);
  }

  Index* node(std::uint32_t id) { return pool.at(id); }
  const Index* node(std::uint32_t id) const { return pool.at(id); }
  int level(std::uint32_t id) const { return static_cast<int>(node(id)[0]); }
  int count(std::uint32_t id) const { return static_cast<int>(node(id)[1]); }
  void set_count(std::uint32_t id, int c) { node(id)[1] = c; }
  std::uint64_t ref(std::uint32_t id, int e) const { return static_cast<std::uint64_t>(node(id)[kRefs + e]); }
  std::uint32_t child(std::uint32_t id, int e) const { return static_cast<std::uint32_t>(ref(id, e)); }
  const Index* lo_block(std::uint32_t id) const { return node(id) + kLo; }
  const Index* hi_block(std::uint32_t id) const { return node(id) + kLo + nd * kSlots; }
  Index& lo(std::uint32_t id, int d, int e) { return node(id)[kLo + d * kSlots + e]; }
  Index& hi(std::uint32_t id, int d, int e) { return node(id)[kLo + (nd + d) * kSlots + e]; }
  Index lo(std::uint32_t id, int d, int e) const { return node(id)[kLo + d * kSlots + e]; }
  Index hi(std::uint32_t id, int d, int e) const { return node(id)[kLo + (nd + d) * kSlots + e]; }

  Bounds get(std::uint32_t id, int e) const {
    Bounds b;
    for (int d = 0; d < nd; ++d) {
      b.v[d] = lo(id, d, e);
      b.v[nd + d] = hi(id, d, e);
    }
    return b;
  }
  void put(std::uint32_t id, int e, const Index* b) {
    for (int d = 0; d < nd; ++d) {
      lo(id, d, e) = b[d];
      hi(id, d, e) = b[nd + d];
    }
  }

  std::uint32_t new_node(int lvl) {
    std::uint32_t id;
    if (!free_nodes.empty()) {
      id = free_nodes.back();
      free_nodes.pop_back();
    } else {
      id = pool.grow();
    }
    node(id)[0] = lvl;
    node(id)[1] = 0;
    return id;
  }

  double volume(const Index* b) const {
    double v = 1;
    for (int d = 0; d < nd; ++d) v *= static_cast<double>(b[nd + d]) - static_cast<double>(b[d]);
    return v;
  }
  double margin(const Index* b) const {
    double m = 0;
    for (int d = 0; d < nd; ++d) m += static_cast<double>(b[nd + d]) - static_cast<double>(b[d]);
    return m;
  }
  void extend(Index* b, const Index* x) const {
    for (int d = 0; d < nd; ++d) {
      b[d] = std::min(b[d], x[d]);
      b[nd + d] = std::max(b[nd + d], x[nd + d]);
    }
  }
  bool covers(const Index* outer, const Index* inner) const {
    for (int d = 0; d < nd; ++d)
      if (inner[d] < outer[d] || inner[nd + d] > outer[nd + d]) return false;
    return true;
  }
  Bounds node_bounds(std::uint32_t id) const {
    Bounds b = get(id, 0);
    for (int e = 1; e < count(id); ++e) {
      for (int d = 0; d < nd; ++d) {
        b.v[d] = std::min(b.v[d], lo(id, d, e));
        b.v[nd + d] = std::max(b.v[nd + d], hi(id, d, e));
      }
    }
    return b;
  }

  void add_entry(std::uint32_t id, const Index* b, std::uint64_t r) {
    const int c = count(id);
    put(id, c, b);
    node(id)[kRefs + c] = static_cast<Index>(r);
    set_count(id, c + 1);
  }
  void remove_entry(std::uint32_t id, int e) {
    const int last = count(id) - 1;
    if (e != last) {
      const Bounds b = get(id, last);
      put(id, e, b.v.data());
      node(id)[kRefs + e] = node(id)[kRefs + last];
    }
    set_count(id, last);
  }

  double entry_volume(std::uint32_t id, int e) const {
    double v = 1;
    for (int d = 0; d < nd; ++d) v *= static_cast<double>(hi(id, d, e)) - static_cast<double>(lo(id, d, e));
    return v;
  }

  // The child whose box grows least to take `b`; ties go to the smaller box.
  // Children that already contain `b` grow by zero, so when there are any
  // (the usual case for pieces of a decomposed array) only they are weighed.
  int choose_subtree(std::uint32_t id, const Index* b) const {
    const std::uint64_t all = (std::uint64_t{1} << count(id)) - 1;
    if (std::uint64_t inside = contain_mask(lo_block(id), hi_block(id), b, nd) & all) {
      int best = std::countr_zero(inside);
      if ((inside &= inside - 1) == 0) return best;
      double best_vol = entry_volume(id, best);
      for (; inside; inside &= inside - 1) {
        const int e = std::countr_zero(inside);
        const double vol = entry_volume(id, e);
        if (vol < best_vol) {
          best = e;
          best_vol = vol;
        }
      }
      return best;
    }
    int best = 0;
    double best_growth = std::numeric_limits<double>::infinity(), best_vol = best_growth;
    for (int e = 0; e < count(id); ++e) {
      double vol = 1, grown = 1;
      for (int d = 0; d < nd; ++d) {
        const Index l = lo(id, d, e), h = hi(id, d, e);
        vol *= static_cast<double>(h) - static_cast<double>(l);
        grown *= static_cast<double>(std::max(h, b[nd + d])) - static_cast<double>(std::min(l, b[d]));
      }
      const double growth = grown - vol;
      if (growth < best_growth || (growth == best_growth && vol < best_vol)) {
        best = e;
        best_growth = growth;
        best_vol = vol;
      }
    }
    return best;
  }

  // Splits a full node (kSlots entries) R*-style: pick the axis with the
  // smallest total margin over all distributions, then the distribution on
  // it with the least overlap (then least volume). Returns the new sibling
  // holding the second group.
  std::uint32_t split(std::uint32_t id) {
    constexpr int kN = kSlots;
    const std::uint32_t sib = new_node(level(id));
    const int w = 2 * nd;
    std::array<Index, kN * 2 * kMaxDims> entries;  // entry e at [e * w, e * w + w)
    std::array<std::uint64_t, kN> refs;
    for (int e = 0; e < kN; ++e) {
      const Bounds b = get(id, e);
      std::copy_n(b.v.begin(), w, entries.begin() + e * w);
      refs[e] = ref(id, e);
    }
    std::array<int, kN> order;
    std::array<Index, kN * 2 * kMaxDims> prefix, suffix;  // running boxes of order[0..i] and order[i..]

    // Sort by (key, tie) of the chosen side and axis, then build the running
    // bounding boxes from both ends.
    auto sort_by = [&](int axis, bool by_hi) {
      const int first = by_hi ? nd + axis : axis, second = by_hi ? axis : nd + axis;
      struct Key {
        Index k1, k2;
        int e;
      };
      std::array<Key, kN> keys;
      for (int e = 0; e < kN; ++e) keys[e] = {entries[e * w + first], entries[e * w + second], e};
      std::sort(keys.begin(), keys.end(),
                [](const Key& a, const Key& b) { return a.k1 != b.k1 ? a.k1 < b.k1 : a.k2 < b.k2; });
      for (int i = 0; i < kN; ++i) order[i] = keys[i].e;
      std::copy_n(&entries[order[0] * w], w, &prefix[0]);
      for (int i = 1; i < kN; ++i) {
        std::copy_n(&prefix[(i - 1) * w], w, &prefix[i * w]);
        extend(&prefix[i * w], &entries[order[i] * w]);
      }
      std::copy_n(&entries[order[kN - 1] * w], w, &suffix[(kN - 1) * w]);
      for (int i = kN - 2; i >= 0; --i) {
        std::copy_n(&suffix[(i + 1) * w], w, &suffix[i * w]);
        extend(&suffix[i * w], &entries[order[i] * w]);
      }
    };

    int best_axis = 0;
    double best_margin = std::numeric_limits<double>::infinity();
    for (int axis = 0; axis < nd; ++axis) {
      double m = 0;
      for (bool by_hi : {false, true}) {
        sort_by(axis, by_hi);
        for (int k = kMinEntries; k <= kN - kMinEntries; ++k) m += margin(&prefix[(k - 1) * w]) + margin(&suffix[k * w]);
      }
      if (m < best_margin) {
        best_margin = m;
        best_axis = axis;
      }
    }

    double best_overlap = std::numeric_limits<double>::infinity(), best_vol = best_overlap;
    bool best_by_hi = false;
    int best_k = kMinEntries;
    for (bool by_hi : {false, true}) {
      sort_by(best_axis, by_hi);
      for (int k = kMinEntries; k <= kN - kMinEntries; ++k) {
        const Index* a = &prefix[(k - 1) * w];
        const Index* b = &suffix[k * w];
        double overlap = 1;
        for (int d = 0; d < nd; ++d)
          overlap *= std::max(0.0, static_cast<double>(std::min(a[nd + d], b[nd + d])) -
                                       static_cast<double>(std::max(a[d], b[d])));
        const double vol = volume(a) + volume(b);
        if (overlap < best_overlap || (overlap == best_overlap && vol < best_vol)) {
          best_overlap = overlap;
          best_vol = vol;
          best_by_hi = by_hi;
          best_k = k;
        }
      }
    }
    sort_by(best_axis, best_by_hi);

    set_count(id, 0);
    for (int i = 0; i < kN; ++i) add_entry(i < best_k ? id : sib, &entries[order[i] * w], refs[order[i]]);
    return sib;
  }

  void insert(const Index* b, std::uint64_t payload) {
    struct Step {
      std::uint32_t node;
      int entry;
    };
    Step path[64];  // root to leaf; height << 64. Left uninitialised: this is the hot path.
    int depth = 0;
    std::uint32_t id = root;
    while (level(id) > 0) {
      const int e = choose_subtree(id, b);
      for (int d = 0; d < nd; ++d) {
        lo(id, d, e) = std::min(lo(id, d, e), b[d]);
        hi(id, d, e) = std::max(hi(id, d, e), b[nd + d]);
      }
      path[depth++] = Step{id, e};
      id = child(id, e);
    }
    add_entry(id, b, payload);
    ++size;
    while (count(id) == kSlots) {
      const std::uint32_t sib = split(id);
      const Bounds nb = node_bounds(id), sb = node_bounds(sib);
      if (depth == 0) {
        const std::uint32_t r = new_node(level(id) + 1);
        add_entry(r, nb.v.data(), id);
        add_entry(r, sb.v.data(), sib);
        root = r;
        break;
      }
      const auto [parent, e] = path[--depth];
      put(parent, e, nb.v.data());
      add_entry(parent, sb.v.data(), sib);
      id = parent;
    }
  }

  // Appends the leaf entries of subtree `id` to `out` and frees its nodes.
  void drain(std::uint32_t id, std::vector<std::pair<Bounds, std::uint64_t>>& out) {
    for (int e = 0; e < count(id); ++e) {
      if (level(id) == 0)
        out.emplace_back(get(id, e), ref(id, e));
      else
        drain(child(id, e), out);
    }
    release(id);
  }

  void release(std::uint32_t id) {
    set_count(id, 0);
    free_nodes.push_back(id);
  }

  bool find(std::uint32_t id, const Index* b, std::uint64_t payload,
            std::vector<std::pair<std::uint32_t, int>>& path) const {
    for (int e = 0; e < count(id); ++e) {
      const Bounds eb = get(id, e);
      if (level(id) == 0) {
        if (ref(id, e) == payload && std::equal(b, b + 2 * nd, eb.v.begin())) {
          path.emplace_back(id, e);
          return true;
        }
      } else if (covers(eb.v.data(), b)) {
        path.emplace_back(id, e);
        if (find(child(id, e), b, payload, path)) return true;
        path.pop_back();
      }
    }
    return false;
  }

  // Guttman's condense: nodes that fall under kMinEntries are removed and
  // their leaf entries inserted again; the other ancestors' boxes shrink.
  bool remove(const Index* b, std::uint64_t payload) {
    std::vector<std::pair<std::uint32_t, int>> path;
    if (!find(root, b, payload, path)) return false;
    auto [leaf, e] = path.back();
    path.pop_back();
    remove_entry(leaf, e);
    --size;
    std::vector<std::pair<Bounds, std::uint64_t>> orphans;
    std::uint32_t id = leaf;
    while (!path.empty()) {
      auto [parent, pe] = path.back();
      path.pop_back();
      if (count(id) < kMinEntries) {
        remove_entry(parent, pe);
        drain(id, orphans);
      } else {
        const Bounds nb = node_bounds(id);
        put(parent, pe, nb.v.data());
      }
      id = parent;
    }
    while (level(root) > 0 && count(root) == 1) {
      const std::uint32_t only = child(root, 0);
      release(root);
      root = only;
    }
    if (count(root) == 0) node(root)[0] = 0;  // an empty root is a leaf
    size -= orphans.size();
    for (const auto& [ob, orphan_payload] : orphans) insert(ob.v.data(), orphan_payload);
    return true;
  }

  // Depth-first with an explicit stack. All of a node's entries are tested
  // at once; the children that match are all prefetched before any is
  // visited, so their cache misses overlap instead of queueing.
  template <typename Fn>
  void query(const Index* q, Fn& fn) const {
    std::array<std::uint32_t, 64 * kSlots> stack;  // height << 64
    int top = 0;
    stack[top++] = root;
    const std::size_t node_bytes = words * sizeof(Index);
    while (top > 0) {
      const std::uint32_t id = stack[--top];
      std::uint64_t mask = overlap_mask(lo_block(id), hi_block(id), q, nd) & ((std::uint64_t{1} << count(id)) - 1);
      const bool leaf = level(id) == 0;
      while (mask) {
        const int e = std::countr_zero(mask);
        mask &= mask - 1;
        if (leaf) {
          fn(id, e);
        } else {
          const std::uint32_t ch = child(id, e);
          const char* p = reinterpret_cast<const char*>(node(ch));
          for (std::size_t off = 0; off < node_bytes; off += 64) __builtin_prefetch(p + off);
          stack[top++] = ch;
        }
      }
    }
  }

  // Returns the number of leaf entries below `id`.
  std::size_t check(std::uint32_t id, int lvl, bool is_root) const {
    if (level(id) != lvl) fail(Code::Internal, "spatial index: node ", id, " has level ", level(id), ", expected ", lvl);
    if (count(id) > kMaxEntries || (!is_root && count(id) < kMinEntries))
      fail(Code::Internal, "spatial index: node ", id, " holds ", count(id), " entries");
    if (lvl == 0) return static_cast<std::size_t>(count(id));
    std::size_t total = 0;
    for (int e = 0; e < count(id); ++e) {
      const Bounds cb = node_bounds(child(id, e)), eb = get(id, e);
      if (!std::equal(cb.v.begin(), cb.v.begin() + 2 * nd, eb.v.begin()))
        fail(Code::Internal, "spatial index: entry ", e, " of node ", id, " is not its child's bounding box");
      total += check(child(id, e), lvl - 1, false);
    }
    return total;
  }

  Box to_box(std::uint32_t id, int e) const {
    Box box;
    box.ndim = nd;
    for (int d = 0; d < nd; ++d) {
      box.lo[d] = lo(id, d, e);
      box.hi[d] = hi(id, d, e);
    }
    return box;
  }
  Bounds to_bounds(const Box& box, const char* what) const {
    detail::validate_box(box, what);
    if (box.ndim != nd)
      fail(Code::InvalidArgument, what, " ", box.to_string(), " has ", box.ndim, " dimensions but the index has ", nd);
    Bounds b;
    std::copy_n(box.lo.begin(), nd, b.v.begin());
    std::copy_n(box.hi.begin(), nd, b.v.begin() + nd);
    return b;
  }
};

SpatialIndex::SpatialIndex(int ndim) {
  if (ndim < 1 || ndim > kMaxDims)
    fail(Code::InvalidArgument, "spatial index ndim = ", ndim, "; Cove supports 1 to ", kMaxDims);
  impl_ = std::make_unique<Impl>(ndim);
}
SpatialIndex::~SpatialIndex() = default;
SpatialIndex::SpatialIndex(SpatialIndex&&) noexcept = default;
SpatialIndex& SpatialIndex::operator=(SpatialIndex&&) noexcept = default;

int SpatialIndex::ndim() const noexcept { return impl_->nd; }
std::size_t SpatialIndex::size() const noexcept { return impl_->size; }
int SpatialIndex::height() const noexcept { return impl_->level(impl_->root) + 1; }

void SpatialIndex::insert(const Box& box, std::uint64_t payload) {
  const Bounds b = impl_->to_bounds(box, "inserted box");
  if (box.empty()) fail(Code::InvalidArgument, "inserted box ", box.to_string(), " is empty");
  impl_->insert(b.v.data(), payload);
}

bool SpatialIndex::remove(const Box& box, std::uint64_t payload) {
  const Bounds b = impl_->to_bounds(box, "removed box");
  return impl_->remove(b.v.data(), payload);
}

void SpatialIndex::clear() {
  const int nd = impl_->nd;
  impl_ = std::make_unique<Impl>(nd);
}

void SpatialIndex::query(const Box& query, detail::FunctionRef<void(const Box&, std::uint64_t)> fn) const {
  const Bounds q = impl_->to_bounds(query, "query box");
  auto visit = [&](std::uint32_t id, int e) { fn(impl_->to_box(id, e), impl_->ref(id, e)); };
  impl_->query(q.v.data(), visit);
}

std::vector<SpatialIndex::Hit> SpatialIndex::query(const Box& query) const {
  std::vector<Hit> hits;
  this->query(query, [&](const Box& b, std::uint64_t payload) { hits.push_back({b, payload}); });
  return hits;
}

void SpatialIndex::check_invariants() const {
  const std::size_t n = impl_->check(impl_->root, impl_->level(impl_->root), true);
  if (n != impl_->size) fail(Code::Internal, "spatial index: ", n, " leaf entries but size() is ", impl_->size);
}

}  // namespace cove
