// dualgibbs::mpi: the ChainGroup of an MPI communicator (built only with DUALGIBBS_WITH_MPI, into dualgibbs_mpi).
#include <dualgibbs/sampling/mpi.hpp>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs::mpi {

namespace {

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("MPI ") + what + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

Group::Group(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw std::runtime_error("dualgibbs::mpi::Group: MPI is not initialized (call MPI_Init first)");
  check(MPI_Comm_dup(comm, &m_comm), "Comm_dup");
  MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(m_comm, &m_rank), "Comm_rank");
  check(MPI_Comm_size(m_comm, &m_size), "Comm_size");
  MPI_Comm local = MPI_COMM_NULL;  // the ranks on this machine
  check(MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local), "Comm_split_type");
  MPI_Comm_size(local, &m_local_size);
  MPI_Comm_free(&local);
}

Group::~Group() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && m_comm != MPI_COMM_NULL) MPI_Comm_free(&m_comm);
}

int Group::lowest_failure(bool failed) {
  int mine = failed ? m_rank : m_size, lowest = m_size;
  check(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, m_comm), "Allreduce");
  return lowest;
}

void Group::broadcast(int root, int& code, std::string& text) {
  int head[2] = {code, static_cast<int>(std::min<std::size_t>(text.size(), 1u << 16))};
  check(MPI_Bcast(head, 2, MPI_INT, root, m_comm), "Bcast");
  code = head[0];
  text.resize(static_cast<std::size_t>(head[1]));
  check(MPI_Bcast(text.data(), head[1], MPI_CHAR, root, m_comm), "Bcast");
}

void Group::gather_items(const double* mine, double* all, const std::vector<std::size_t>& counts, std::size_t unit) {
  // Items travel as one derived type of `unit` doubles, so counts and displacements stay within int for any
  // realistic number of chains or groups; the block itself may exceed 2^31 doubles.
  std::vector<int> count(counts.size()), displacement(counts.size());
  std::size_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > INT_MAX || offset > INT_MAX)
      throw std::invalid_argument("dualgibbs::mpi: more than 2^31 items in one gather");
    count[r] = static_cast<int>(counts[r]);
    displacement[r] = static_cast<int>(offset);
    offset += counts[r];
  }
  if (offset == 0 || unit == 0) return;
  if (unit > INT_MAX) throw std::invalid_argument("dualgibbs::mpi: an item of more than 2^31 doubles");
  MPI_Datatype item;
  check(MPI_Type_contiguous(static_cast<int>(unit), MPI_DOUBLE, &item), "Type_contiguous");
  check(MPI_Type_commit(&item), "Type_commit");
  const auto me = static_cast<std::size_t>(m_rank);
  const bool in_place = mine == all + static_cast<std::size_t>(displacement[me]) * unit;
  const int status = MPI_Allgatherv(in_place ? MPI_IN_PLACE : mine, count[me], item, all, count.data(),
                                    displacement.data(), item, m_comm);
  MPI_Type_free(&item);
  check(status, "Allgatherv");
}

EnsembleStats run_ensemble(MPI_Comm comm, const Model& model, Domain domain, const EnsembleOptions& options,
                           const Observer& observe) {
  Group group(comm);
  const ScopedChainGroup scope(group);
  return dualgibbs::run_ensemble(model, domain, options, observe);
}

}  // namespace dualgibbs::mpi
