#pragma once
// A minimal fork-join pool for run_ensemble: the calling thread is participant 0, threads - 1 workers wait for
// jobs. run(job) calls job(p) once on every participant p and returns when all are done, rethrowing the first
// exception a participant threw.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dualgibbs::detail {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned participants) : m_participants(participants < 1 ? 1 : participants) {
    m_workers.reserve(m_participants - 1);
    for (unsigned p = 1; p < m_participants; ++p) m_workers.emplace_back([this, p] { loop(p); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stop = true;
    }
    m_start.notify_all();
    for (auto& t : m_workers) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned participants() const noexcept { return m_participants; }

  void run(const std::function<void(unsigned)>& job) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_job = &job;
      m_pending = m_participants - 1;
      m_error = nullptr;
      ++m_generation;
    }
    m_start.notify_all();
    std::exception_ptr mine;
    try {
      job(0);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(m_mutex);
    m_done.wait(lock, [this] { return m_pending == 0; });
    m_job = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (m_error) std::rethrow_exception(m_error);
  }

 private:
  void loop(unsigned p) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_start.wait(lock, [&] { return m_stop || m_generation != seen; });
        if (m_stop) return;
        seen = m_generation;
        job = m_job;
      }
      std::exception_ptr err;
      try {
        (*job)(p);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(m_mutex);
      if (err && !m_error) m_error = err;
      if (--m_pending == 0) m_done.notify_one();
    }
  }

  unsigned m_participants;
  std::vector<std::thread> m_workers;
  std::mutex m_mutex;
  std::condition_variable m_start, m_done;
  const std::function<void(unsigned)>* m_job = nullptr;
  std::uint64_t m_generation = 0;
  unsigned m_pending = 0;
  bool m_stop = false;
  std::exception_ptr m_error;
};

}  // namespace dualgibbs::detail
