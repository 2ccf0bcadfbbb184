#pragma once
// The library's one 64-bit FNV-1a digest (Fowler, Noll, Vo): of a model (api::model_digest) and of a file's bytes
// (AtomicOutput::digest, api::file_digest). Not cryptographic: it tells one run's data from another's.
#include <cstddef>
#include <cstdint>

namespace dualgibbs::api::detail {

/// The digest of nothing.
constexpr std::uint64_t kFnv1aStart = 0xcbf29ce484222325ULL;

/// `digest` extended by `n` bytes at `data`.
inline std::uint64_t fnv1a(std::uint64_t digest, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) digest = (digest ^ p[i]) * 0x100000001b3ULL;
  return digest;
}

}  // namespace dualgibbs::api::detail
