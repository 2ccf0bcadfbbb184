// Storage for the samplers' large arrays: huge pages where it pays.
#include <dualgibbs/core/memory.hpp>

#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dualgibbs::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{1} << 21;
}

void* allocate_large(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new (bytes, std::align_val_t{64});  // rows never straddle a line
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure only costs speed
#endif
  return p;
}

void deallocate_large(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugePage)
    ::operator delete (p, std::align_val_t{64});
  else
    std::free(p);
}

}  // namespace dualgibbs::detail
