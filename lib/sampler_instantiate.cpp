// Explicit instantiations of the sweep engine for the shipped kernels (GTSAM style): users of the library link
// them from libdualgibbs instead of compiling the hot loop themselves. Their own kernels instantiate the
// header template as usual.
#include <dualgibbs/sampler.hpp>

namespace dualgibbs {

#define DUALGIBBS_SAMPLER_INSTANTIATE(K)   \
  template class GibbsSampler<K, 1>;       \
  template class GibbsSampler<K, 2>;       \
  template class GibbsSampler<K, 4>;       \
  template class GibbsSampler<K, 8>;       \
  template class GibbsSampler<K, 16>;
DUALGIBBS_SAMPLER_INSTANTIATE(CsrKernel)
DUALGIBBS_SAMPLER_INSTANTIATE(DualIncidenceKernel)
#undef DUALGIBBS_SAMPLER_INSTANTIATE

}  // namespace dualgibbs
