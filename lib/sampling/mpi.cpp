// dualgibbs::mpi: the ChainGroup of an MPI communicator (built only with DUALGIBBS_WITH_MPI, into dualgibbs_mpi).
#include <dualgibbs/sampling/mpi.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dualgibbs::mpi {

namespace {

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw std::runtime_error(std::string("MPI ") + what +
                           " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

// Completes a nonblocking collective. A blocking MPI call busy-waits, and on a machine shared with other work a
// spinning rank holds the core its partner needs to reach the same call. But a nonblocking collective also
// progresses only inside MPI calls, so a rank asleep delays its partners' completion as well as its own: with
// sleeps from the first microseconds (up to 200 us), fig6's 3600 collectives cost each rank 1.8 to 2.8 s of
// waiting on an idle machine. So the waiting rank polls and yields its core (std::this_thread::yield: immediate
// when nothing else wants the core) for the first 2 ms, and only then sleeps between polls (up to 200 us), so that
// on a loaded machine it still gives the core away while the others work.
void complete(MPI_Request& request, const char* what) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (long sleeps = 0;;) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (Clock::now() - start < std::chrono::milliseconds(2)) {
      std::this_thread::yield();
      continue;
    }
    const long ns = std::min(200000L, 1000L * ++sleeps);
    timespec pause{0, ns};
    nanosleep(&pause, nullptr);
  }
}

// A contiguous datatype of `unit` doubles (one item of a gather or an all-to-all), freed at the end of its scope
// whether the collective completes or throws.
class ItemType {
 public:
  explicit ItemType(std::size_t unit) {
    if (unit > INT_MAX) throw std::invalid_argument("dualgibbs::mpi: an item of more than 2^31 doubles");
    check(MPI_Type_contiguous(static_cast<int>(unit), MPI_DOUBLE, &m_type), "Type_contiguous");
    if (const int status = MPI_Type_commit(&m_type); status != MPI_SUCCESS) {
      MPI_Type_free(&m_type);
      check(status, "Type_commit");
    }
  }
  ~ItemType() { MPI_Type_free(&m_type); }
  ItemType(const ItemType&) = delete;
  ItemType& operator=(const ItemType&) = delete;
  MPI_Datatype get() const noexcept { return m_type; }

 private:
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
};

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
  if (!finalized && m_halo_comm != MPI_COMM_NULL) MPI_Comm_free(&m_halo_comm);
  if (!finalized && m_comm != MPI_COMM_NULL) MPI_Comm_free(&m_comm);
}

int Group::lowest_failure(bool failed) {
  int mine = failed ? m_rank : m_size, lowest = m_size;
  MPI_Request request;
  check(MPI_Iallreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, m_comm, &request), "Iallreduce");
  complete(request, "Iallreduce");
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
  const ItemType item(unit);
  const auto me = static_cast<std::size_t>(m_rank);
  const bool in_place = mine == all + static_cast<std::size_t>(displacement[me]) * unit;
  MPI_Request request;
  check(MPI_Iallgatherv(in_place ? MPI_IN_PLACE : mine, count[me], item.get(), all, count.data(), displacement.data(),
                        item.get(), m_comm, &request),
        "Iallgatherv");
  complete(request, "Iallgatherv");
}

void Group::exchange_items(const double* send, double* recv, const std::vector<std::size_t>& counts, std::size_t unit) {
  // One MPI_Ialltoallv of items of `unit` doubles: each member receives only the blocks sent to it.
  const auto k = static_cast<std::size_t>(m_size), me = static_cast<std::size_t>(m_rank);
  std::vector<int> send_count(k), send_at(k), recv_count(k), recv_at(k);
  std::size_t send_offset = 0, recv_offset = 0;
  for (std::size_t r = 0; r < k; ++r) {
    const std::size_t out = counts[me * k + r], in = counts[r * k + me];
    if (out > INT_MAX || in > INT_MAX || send_offset > INT_MAX || recv_offset > INT_MAX)
      throw std::invalid_argument("dualgibbs::mpi: more than 2^31 items in one all-to-all");
    send_count[r] = static_cast<int>(out);
    send_at[r] = static_cast<int>(send_offset);
    recv_count[r] = static_cast<int>(in);
    recv_at[r] = static_cast<int>(recv_offset);
    send_offset += out;
    recv_offset += in;
  }
  if (unit == 0) return;
  const ItemType item(unit);
  MPI_Request request;
  check(MPI_Ialltoallv(send, send_count.data(), send_at.data(), item.get(), recv, recv_count.data(), recv_at.data(),
                       item.get(), m_comm, &request),
        "Ialltoallv");
  complete(request, "Ialltoallv");
}

void Group::declare_halo(const std::vector<int>& neighbors) {
  // A neighbourhood collective moves the halo only and lets MPI see the fixed exchange pattern once; the relation
  // is symmetric, so the sources are the destinations. Kept in rank order (reorder = 0): the ranks keep their parts.
  if (m_halo_comm != MPI_COMM_NULL) MPI_Comm_free(&m_halo_comm);
  const int degree = static_cast<int>(neighbors.size());
  check(MPI_Dist_graph_create_adjacent(m_comm, degree, neighbors.data(), MPI_UNWEIGHTED, degree, neighbors.data(),
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &m_halo_comm),
        "Dist_graph_create_adjacent");
  MPI_Comm_set_errhandler(m_halo_comm, MPI_ERRORS_RETURN);
}

void Group::exchange_halo(const double* send, const std::vector<std::size_t>& send_counts, double* recv,
                          const std::vector<std::size_t>& recv_counts, std::size_t unit) {
  if (m_halo_comm == MPI_COMM_NULL)
    throw std::logic_error("dualgibbs::mpi::Group: halo_exchange before set_halo_neighbors");
  const std::size_t k = send_counts.size();
  std::vector<int> send_count(k), send_at(k), recv_count(k), recv_at(k);
  std::size_t send_offset = 0, recv_offset = 0;
  for (std::size_t j = 0; j < k; ++j) {
    if (send_counts[j] > INT_MAX || recv_counts[j] > INT_MAX || send_offset > INT_MAX || recv_offset > INT_MAX)
      throw std::invalid_argument("dualgibbs::mpi: more than 2^31 items in one halo exchange");
    send_count[j] = static_cast<int>(send_counts[j]);
    send_at[j] = static_cast<int>(send_offset);
    recv_count[j] = static_cast<int>(recv_counts[j]);
    recv_at[j] = static_cast<int>(recv_offset);
    send_offset += send_counts[j];
    recv_offset += recv_counts[j];
  }
  const ItemType item(std::max<std::size_t>(unit, 1));
  MPI_Request request;
  check(MPI_Ineighbor_alltoallv(send, send_count.data(), send_at.data(), item.get(), recv, recv_count.data(),
                                recv_at.data(), item.get(), m_halo_comm, &request),
        "Ineighbor_alltoallv");
  complete(request, "Ineighbor_alltoallv");
}

EnsembleStats run_ensemble(MPI_Comm comm, const Model& model, Domain domain, const EnsembleOptions& options,
                           const Observer& observe, const SchemeOptions& scheme) {
  Group group(comm);
  EnsembleOptions shared = options;
  shared.group = &group;
  return dualgibbs::run_ensemble(model, domain, shared, observe, scheme);
}

EnsembleStats run_partitioned(MPI_Comm comm, const Model& model, Domain domain, const EnsembleOptions& options,
                              const Observer& observe, const std::vector<int>& partition, GraphShare* share) {
  Group group(comm);
  return dualgibbs::run_partitioned(model, domain, options, observe, group, partition, share);
}

}  // namespace dualgibbs::mpi
