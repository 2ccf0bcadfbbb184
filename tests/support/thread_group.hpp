#pragma once
// An in-process chain group whose members are threads (tests/support/README.md): the ChainGroup protocol of
// MPI ranks, here in every build, the sanitizer build included.

#include <dualgibbs/core/chain_group.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dualgibbs::testing {

// What the members of a ThreadGroup share: a reusable barrier and the exchange slots.
struct Hub {
  explicit Hub(int k) : size(k), flags(static_cast<std::size_t>(k)), sources(static_cast<std::size_t>(k)) {}
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    const std::uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen; });
    }
  }
  int size;
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  std::vector<int> flags;
  std::vector<const double*> sources;
  int code = 0;
  std::string text;
};

// A member of an in-process group: one thread each.
class ThreadMember final : public ChainGroup {
 public:
  ThreadMember(Hub& hub, int rank) : m_hub(hub), m_rank(rank) {}
  int rank() const noexcept override { return m_rank; }
  int size() const noexcept override { return m_hub.size; }

 protected:
  int lowest_failure(bool failed) override {
    m_hub.flags[static_cast<std::size_t>(m_rank)] = failed;
    m_hub.barrier();
    int lowest = size();
    for (int r = size() - 1; r >= 0; --r)
      if (m_hub.flags[static_cast<std::size_t>(r)]) lowest = r;
    m_hub.barrier();
    return lowest;
  }
  void broadcast(int root, int& code, std::string& text) override {
    if (m_rank == root) {
      m_hub.code = code;
      m_hub.text = text;
    }
    m_hub.barrier();
    code = m_hub.code;
    text = m_hub.text;
    m_hub.barrier();
  }
  void gather_items(const double* mine, double* all, const std::vector<std::size_t>& counts,
                    std::size_t unit) override {
    m_hub.sources[static_cast<std::size_t>(m_rank)] = mine;
    m_hub.barrier();
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      const double* src = m_hub.sources[r];
      if (src != all + offset * unit) std::copy(src, src + counts[r] * unit, all + offset * unit);
      offset += counts[r];
    }
    m_hub.barrier();  // the sources stay valid until every member has copied
  }

 private:
  Hub& m_hub;
  int m_rank;
};

// Runs body(member) on `k` threads, one member each; the body passes its member to every call it shares (an
// EnsembleOptions::group, an Execution). Rethrows nothing (the body records).
void on_members(int k, const std::function<void(ThreadMember&)>& body) {
  Hub hub(k);
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r)
    threads.emplace_back([&, r] {
      ThreadMember member(hub, r);
      body(member);
    });
  for (auto& t : threads) t.join();
}

}  // namespace dualgibbs::testing
