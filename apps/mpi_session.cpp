// The command under mpirun: see mpi_session.hpp and docs/mpi.md.
#include "mpi_session.hpp"

#if defined(DUALGIBBS_WITH_MPI)
#include <dualgibbs/sampling/mpi.hpp>
#endif

#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <streambuf>

namespace dualgibbs::cli {

namespace {

bool g_root = true;

// A stream buffer that drops everything: the output of ranks other than 0.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

#if defined(DUALGIBBS_WITH_MPI)
// Started by an MPI launcher: Open MPI's mpirun, a PMIx or PMI launcher (srun, MPICH's hydra).
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}
#endif

}  // namespace

struct MpiSession::State {
  NullBuffer null;
  std::streambuf* out = nullptr;
  std::streambuf* err = nullptr;
#if defined(DUALGIBBS_WITH_MPI)
  bool initialized = false;
  std::optional<mpi::Group> group;
#endif
};

MpiSession::MpiSession([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) : m_state(new State) {
#if defined(DUALGIBBS_WITH_MPI)
  if (!launched_by_mpi()) return;
  int provided = 0;
  // The library calls MPI only from the main thread (its worker threads never do).
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::cerr << "dualgibbs: failed: MPI_Init_thread failed" << std::endl;
    std::exit(1);
  }
  m_state->initialized = true;
  m_state->group.emplace(MPI_COMM_WORLD);
  g_root = m_state->group->rank() == 0;
  if (!g_root) {
    m_state->out = std::cout.rdbuf(&m_state->null);
    m_state->err = std::cerr.rdbuf(&m_state->null);
  }
#endif
}

MpiSession::~MpiSession() {
  if (m_state->out) std::cout.rdbuf(m_state->out);
  if (m_state->err) std::cerr.rdbuf(m_state->err);
#if defined(DUALGIBBS_WITH_MPI)
  m_state->group.reset();
  if (m_state->initialized) MPI_Finalize();
#endif
}

ChainGroup* MpiSession::group() const noexcept {
#if defined(DUALGIBBS_WITH_MPI)
  if (m_state->group && m_state->group->size() > 1) return &*m_state->group;
#endif
  return nullptr;
}

int MpiSession::finish(int code, const std::exception_ptr& error) {
  ChainGroup* const group = this->group();
  // An error every rank already learned of (settled by the library) is not settled again: the ranks unwind it
  // together and all arrive here.
  if (!group || (error && group->failure_settled())) return code;
  try {
    group->settle(error);
  } catch (const std::invalid_argument& e) {
    if (!error) std::cerr << "dualgibbs: error: " << e.what() << std::endl;  // another rank's: not printed yet
    return error ? code : 2;
  } catch (const std::exception& e) {
    if (!error) std::cerr << "dualgibbs: failed: " << e.what() << std::endl;
    return error ? code : 1;
  } catch (...) {
    return error ? code : 1;
  }
  return code;
}

bool is_root() noexcept { return g_root; }

void on_root(ChainGroup* group, const std::function<void()>& work) {
  if (!group) {
    work();
    return;
  }
  group->run([&] {
    if (is_root()) work();
  });
}

}  // namespace dualgibbs::cli
