#include "core/copy_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace cove::detail {

namespace {

using Byte = unsigned char;

// Element sizes known at compile time get fixed-size moves; others use memcpy.
template <std::size_t E>
struct FixedSize {
  static constexpr std::size_t size() { return E; }
};
struct RuntimeSize {
  std::size_t e;
  std::size_t size() const { return e; }
};
template <typename Size>
constexpr std::size_t kFixedSize = 0;  // 0: known only at run time
template <std::size_t E>
constexpr std::size_t kFixedSize<FixedSize<E>> = E;

template <typename Fn>
void dispatch_size(std::int64_t elem, Fn&& fn) {
  switch (elem) {
    case 1: return fn(FixedSize<1>{});
    case 2: return fn(FixedSize<2>{});
    case 4: return fn(FixedSize<4>{});
    case 8: return fn(FixedSize<8>{});
    case 16: return fn(FixedSize<16>{});
    default: return fn(RuntimeSize{static_cast<std::size_t>(elem)});
  }
}

// memcpy that writes around the cache where it can.
void stream_copy(Byte* d, const Byte* s, std::size_t n) {
#if defined(__SSE2__)
  const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
  if (n < head + 64) return static_cast<void>(std::memcpy(d, s, n));
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, n - i);
#else
  std::memcpy(d, s, n);
#endif
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Transposes a ta x tb tile: element (a, b) is read from s + a*E + b*ss and
// written to d + a*dd + b*E (dd: the destination's row stride, bytes).
// Full 4x4 (4-byte) and 2x2 (8-byte) blocks use SSE shuffles.
template <typename Size>
void transpose_tile(const Byte* s, std::int64_t ss, Byte* d, std::int64_t dd, Index ta, Index tb, Size size) {
  const std::size_t e = size.size();
  Index b = 0;
#if defined(__SSE2__)
  if constexpr (kFixedSize<Size> == 4) {
    for (; b + 4 <= tb; b += 4) {
      Index a = 0;
      for (; a + 4 <= ta; a += 4) {
        const Byte* sp = s + b * ss + a * 4;
        __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(sp));
        __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(sp + ss));
        __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(sp + 2 * ss));
        __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(sp + 3 * ss));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        Byte* dp = d + a * dd + b * 4;
        _mm_storeu_ps(reinterpret_cast<float*>(dp), r0);
        _mm_storeu_ps(reinterpret_cast<float*>(dp + dd), r1);
        _mm_storeu_ps(reinterpret_cast<float*>(dp + 2 * dd), r2);
        _mm_storeu_ps(reinterpret_cast<float*>(dp + 3 * dd), r3);
      }
      for (; a < ta; ++a)
        for (Index k = 0; k < 4; ++k) std::memcpy(d + a * dd + (b + k) * 4, s + (b + k) * ss + a * 4, 4);
    }
  } else if constexpr (kFixedSize<Size> == 8) {
    for (; b + 2 <= tb; b += 2) {
      Index a = 0;
      for (; a + 2 <= ta; a += 2) {
        const Byte* sp = s + b * ss + a * 8;
        const __m128d r0 = _mm_loadu_pd(reinterpret_cast<const double*>(sp));
        const __m128d r1 = _mm_loadu_pd(reinterpret_cast<const double*>(sp + ss));
        Byte* dp = d + a * dd + b * 8;
        _mm_storeu_pd(reinterpret_cast<double*>(dp), _mm_unpacklo_pd(r0, r1));
        _mm_storeu_pd(reinterpret_cast<double*>(dp + dd), _mm_unpackhi_pd(r0, r1));
      }
      for (; a < ta; ++a)
        for (Index k = 0; k < 2; ++k) std::memcpy(d + a * dd + (b + k) * 8, s + (b + k) * ss + a * 8, 8);
    }
  }
#endif
  for (; b < tb; ++b) {
    const Byte* srow = s + b * ss;
    for (Index a = 0; a < ta; ++a) std::memcpy(d + a * dd + b * static_cast<std::int64_t>(e), srow + a * e, size.size());
  }
}

// Block shape for the tiled path. Measured on the 2-core AMD EPYC VM this
// was developed on: reading 1-2 KiB segments from rows a page or more apart
// runs at 6-11 GB/s against 18-28 GB/s sequential, while non-temporal
// writes reach ~24 GB/s from 1 KiB segments on; longer segments need
// blocks larger than L2, which slows the in-cache transpose more than it
// saves. Source segments of 2 KiB and destination segments of 1 KiB were
// the best compromise (see docs/core.md).
constexpr std::size_t kSourceSegmentBytes = 2048;
constexpr std::size_t kDestSegmentBytes = 1024;
constexpr std::size_t kBufBytes = 2048 * 1024;  // bound on the block buffer; larger elements go one by one
constexpr std::size_t kSubTileRowBytes = 128;    // sub-tiles of 2 lines a row stay in L1

}  // namespace

void copy_runs(const Byte* s, Byte* d, const CopyPlan& p, bool stream) {
  if (p.innermost_contiguous()) {
    const auto run = static_cast<std::size_t>(p.ext[p.n - 1] * p.elem);
    if (stream && run >= 256) {
      for_each_outer(p, p.n - 1, [&](std::int64_t so, std::int64_t dof) { stream_copy(d + dof, s + so, run); });
      stream_fence();
    } else {
      for_each_outer(p, p.n - 1, [&](std::int64_t so, std::int64_t dof) { std::memcpy(d + dof, s + so, run); });
    }
  } else {
    const auto e = static_cast<std::size_t>(p.elem);
    for_each_outer(p, p.n, [&](std::int64_t so, std::int64_t dof) { std::memcpy(d + dof, s + so, e); });
  }
}

void copy_general(const Byte* s, Byte* d, const CopyPlan& p) {
  dispatch_size(p.elem, [&](auto size) {
    const Index n = p.ext[p.n - 1];
    const std::int64_t ss = p.ss[p.n - 1], ds = p.ds[p.n - 1];
    for_each_outer(p, p.n - 1, [&](std::int64_t so, std::int64_t dof) {
      const Byte* sp = s + so;
      Byte* dp = d + dof;
      for (Index i = 0; i < n; ++i) std::memcpy(dp + i * ds, sp + i * ss, size.size());
    });
  });
}

void move_source_unit_dim_inward(CopyPlan& p) {
  const int j = p.source_unit_dim();
  auto rotate = [&](auto& a) { std::rotate(a.begin() + j, a.begin() + j + 1, a.begin() + p.n - 1); };
  rotate(p.ext);
  rotate(p.ss);
  rotate(p.ds);
}

// The last two plan dimensions form a plane: a (source-contiguous, n-2) by b
// (destination-contiguous, n-1). Each block of the plane is transposed in
// L1-sized sub-tiles into a buffer laid out like the destination, then
// written out as rows. Source rows are read in segments of
// kSourceSegmentBytes and destination rows written in segments of
// kDestSegmentBytes, so neither side is touched a line at a time across pages.
void copy_tiled(const Byte* s, Byte* d, const CopyPlan& p, bool stream) {
  const std::size_t e = static_cast<std::size_t>(p.elem);
  const Index na = p.ext[p.n - 2], nb = p.ext[p.n - 1];
  const std::int64_t ss_b = p.ss[p.n - 1], ds_a = p.ds[p.n - 2];
  const Index arow = std::max<Index>(1, static_cast<Index>(kSourceSegmentBytes / e));
  const Index brow = std::max<Index>(1, static_cast<Index>(kDestSegmentBytes / e));
  if (static_cast<std::size_t>(arow * brow) * e > kBufBytes) return copy_general(s, d, p);  // huge elements
  const Index ba = std::min(na, arow), bb = std::min(nb, brow);
  const Index sub = std::max<Index>(2, static_cast<Index>(kSubTileRowBytes / e));
  const auto bufrow = static_cast<std::int64_t>(bb * static_cast<Index>(e));
  std::vector<Byte> buf(static_cast<std::size_t>(ba * bufrow));
  dispatch_size(p.elem, [&](auto size) {
    for_each_outer(p, p.n - 2, [&](std::int64_t so, std::int64_t dof) {
      for (Index a0 = 0; a0 < na; a0 += ba) {
        const Index ta = std::min(ba, na - a0);
        for (Index b0 = 0; b0 < nb; b0 += bb) {
          const Index tb = std::min(bb, nb - b0);
          // L1-sized sub-tiles, walking along the source rows.
          const Byte* sblock = s + so + a0 * static_cast<std::int64_t>(e) + b0 * ss_b;
          for (Index sb = 0; sb < tb; sb += sub) {
            for (Index sa = 0; sa < ta; sa += sub)
              transpose_tile(sblock + sa * static_cast<std::int64_t>(e) + sb * ss_b, ss_b,
                             buf.data() + sa * bufrow + sb * static_cast<std::int64_t>(e), bufrow,
                             std::min(sub, ta - sa), std::min(sub, tb - sb), size);
          }
          Byte* drow = d + dof + a0 * ds_a + b0 * static_cast<std::int64_t>(e);
          const std::size_t n = static_cast<std::size_t>(tb) * e;
          for (Index a = 0; a < ta; ++a) {
            if (stream)
              stream_copy(drow + a * ds_a, buf.data() + a * bufrow, n);
            else
              std::memcpy(drow + a * ds_a, buf.data() + a * bufrow, n);
          }
        }
      }
    });
  });
  if (stream) stream_fence();
}

}  // namespace cove::detail
