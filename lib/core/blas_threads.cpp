// The BLAS thread count (OpenBLAS, looked up at run time) and the name of the BLAS library in use.
#include "core/blas_threads.hpp"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace dualgibbs::detail {

namespace {
using SetThreads = void (*)(int);
using GetThreads = int (*)();
SetThreads openblas_set() { return reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")); }
GetThreads openblas_get() { return reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")); }
}  // namespace

ScopedBlasThreads::ScopedBlasThreads(int threads) {
  const SetThreads set = openblas_set();
  const GetThreads get = openblas_get();
  if (!set || !get) return;
  m_previous = get();
  if (m_previous != threads)
    set(threads);
  else
    m_previous = 0;
}

int ScopedBlasThreads::current() {
  const GetThreads get = openblas_get();
  return get ? get() : 0;
}

ScopedBlasThreads::~ScopedBlasThreads() {
  if (m_previous > 0) openblas_set()(m_previous);
}

namespace {
int find_blas(dl_phdr_info* info, size_t, void* data) {
  const std::string name = info->dlpi_name ? info->dlpi_name : "";
  if (name.find("blas") == std::string::npos) return 0;
  char resolved[PATH_MAX];
  auto* out = static_cast<std::string*>(data);
  if (!out->empty()) *out += ", ";
  *out += realpath(name.c_str(), resolved) ? std::string(resolved) : name;
  return 0;
}
}  // namespace

std::string blas_library() {
  std::string found;
  dl_iterate_phdr(find_blas, &found);
  return found.empty() ? "unknown" : found;
}

}  // namespace dualgibbs::detail
