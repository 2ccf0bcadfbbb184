// Scan orders and the explicit instantiations of the sweep engine for the shipped kernels (GTSAM style): users of
// the library link them from libdualgibbs instead of compiling the hot loop themselves. Their own kernels
// instantiate the header template as usual.
#include <dualgibbs/sampling/sampler.hpp>

#include <stdexcept>
#include <string>

namespace dualgibbs {

ScanOrder parse_scan_order(const std::string& name) {
  if (name == "random") return ScanOrder::Random;
  if (name == "permutation") return ScanOrder::Permutation;
  if (name == "fixed") return ScanOrder::Fixed;
  throw std::invalid_argument("unknown scan order '" + name + "' (expected 'random', 'permutation' or 'fixed')");
}

const char* to_string(ScanOrder scan) noexcept {
  switch (scan) {
    case ScanOrder::Random: return "random";
    case ScanOrder::Permutation: return "permutation";
    case ScanOrder::Fixed: return "fixed";
  }
  return "unknown";
}

#define DUALGIBBS_SAMPLER_INSTANTIATE(K, W) template class GibbsSampler<K, W>;
#define DUALGIBBS_SAMPLER_INSTANTIATE_ALL(K) DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_SAMPLER_INSTANTIATE, K)
DUALGIBBS_SHIPPED_KERNELS(DUALGIBBS_SAMPLER_INSTANTIATE_ALL)
#undef DUALGIBBS_SAMPLER_INSTANTIATE_ALL
#undef DUALGIBBS_SAMPLER_INSTANTIATE

}  // namespace dualgibbs
