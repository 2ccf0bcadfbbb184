#pragma once
/// \file memory.hpp
/// Storage and cache hints for the samplers' large arrays.

#include <dualgibbs/export.hpp>

#include <cstddef>
#include <vector>

namespace dualgibbs::detail {

/// Storage for the sampler's large arrays (states, tallies, kernel coefficients): blocks of at least 2 MiB are
/// 2 MiB-aligned and, on Linux, marked for transparent huge pages, because updates at random sites of arrays of
/// hundreds of MB otherwise miss the TLB on nearly every access. Smaller blocks come from operator new, 64-byte
/// aligned (a lane row of W <= 8 doubles then never straddles two cache lines).
/// \throws std::bad_alloc when memory runs out.
DUALGIBBS_EXPORT void* allocate_large(std::size_t bytes);
/// Releases a block from allocate_large() of the same size.
DUALGIBBS_EXPORT void deallocate_large(void* p, std::size_t bytes) noexcept;

/// Standard allocator over allocate_large().
template <class T>
struct LargeAllocator {
  using value_type = T;  ///< element type
  LargeAllocator() noexcept = default;
  /// Rebinding copy.
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) noexcept {}
  /// Storage for n elements.
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  /// Releases storage of n elements.
  void deallocate(T* p, std::size_t n) noexcept { deallocate_large(p, n * sizeof(T)); }
  /// All instances are interchangeable.
  friend bool operator==(const LargeAllocator&, const LargeAllocator&) noexcept { return true; }
  /// All instances are interchangeable.
  friend bool operator!=(const LargeAllocator&, const LargeAllocator&) noexcept { return false; }
};
/// A std::vector over LargeAllocator.
template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

#if defined(__GNUC__) || defined(__clang__)
/// Hint: the line at p will be written soon.
inline void prefetch_write(const void* p) noexcept { __builtin_prefetch(p, 1, 3); }
/// Hint: the line at p will be read soon.
inline void prefetch_read(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }
#else
/// Hint: the line at p will be written soon (no-op on this compiler).
inline void prefetch_write(const void*) noexcept {}
/// Hint: the line at p will be read soon (no-op on this compiler).
inline void prefetch_read(const void*) noexcept {}
#endif

}  // namespace dualgibbs::detail
