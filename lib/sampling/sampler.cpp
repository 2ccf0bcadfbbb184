// Scan orders and the explicit instantiations of the sweep engine for the shipped kernels (GTSAM style): users of
// the library link them from libdualgibbs instead of compiling the hot loop themselves. Their own kernels
// instantiate the header template as usual.
#include <dualgibbs/sampling/sampler.hpp>

#include "core/enum_names.hpp"

#include <string>

namespace dualgibbs {

namespace {
constexpr detail::EnumName<ScanOrder> kScanOrders[] = {
    {ScanOrder::Random, "random"}, {ScanOrder::Permutation, "permutation"}, {ScanOrder::Fixed, "fixed"}};
}  // namespace

ScanOrder parse_scan_order(const std::string& name) { return detail::parse_enum(kScanOrders, name, "scan order"); }

const char* to_string(ScanOrder scan) noexcept { return detail::enum_name(kScanOrders, scan); }

#define DUALGIBBS_SAMPLER_INSTANTIATE(K, W) template class GibbsSampler<K, W>;
#define DUALGIBBS_SAMPLER_INSTANTIATE_ALL(K) DUALGIBBS_SHIPPED_WIDTHS(DUALGIBBS_SAMPLER_INSTANTIATE, K)
DUALGIBBS_SHIPPED_KERNELS(DUALGIBBS_SAMPLER_INSTANTIATE_ALL)
#undef DUALGIBBS_SAMPLER_INSTANTIATE_ALL
#undef DUALGIBBS_SAMPLER_INSTANTIATE

}  // namespace dualgibbs
