// Execution (core/execution.hpp): the default is this process alone, a group counts only with two or more members,
// and the thread budget is the available threads capped by the threads asked for.
#define BOOST_TEST_MODULE execution
#include <boost/test/unit_test.hpp>

#include <dualgibbs/core/chain_group.hpp>
#include <dualgibbs/core/execution.hpp>
#include <dualgibbs/core/machine.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// A group that only answers rank, size and local size: no test here makes a collective.
class CountedGroup final : public dualgibbs::ChainGroup {
 public:
  CountedGroup(int size, int local) : m_size(size), m_local(local) {}
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return m_size; }
  int local_size() const noexcept override { return m_local; }

 protected:
  int lowest_failure(bool) override { throw std::logic_error("CountedGroup: no collective expected"); }
  void broadcast(int, int&, std::string&) override { throw std::logic_error("CountedGroup: no collective expected"); }
  void gather_items(const double*, double*, const std::vector<std::size_t>&, std::size_t) override {
    throw std::logic_error("CountedGroup: no collective expected");
  }

 private:
  int m_size, m_local;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(execution)

BOOST_AUTO_TEST_CASE(the_default_is_this_process_alone) {
  using dualgibbs::Execution;
  const Execution alone;
  BOOST_TEST(alone.threads == 0u);
  BOOST_TEST(alone.group == nullptr);
  BOOST_TEST(alone.shared() == nullptr);
}

BOOST_AUTO_TEST_CASE(a_group_is_shared_only_with_two_or_more_members) {
  using dualgibbs::Execution;
  CountedGroup one(1, 1), two(2, 1);
  const Execution with_one{0, &one}, with_two{0, &two};
  BOOST_TEST(with_one.shared() == nullptr);  // a group of one is this process alone
  BOOST_TEST(with_two.shared() == &two);
  const Execution own = with_two.alone();  // a member's own work: the threads, without the group
  BOOST_TEST(own.group == nullptr);
  BOOST_TEST(own.threads == with_two.threads);
}

BOOST_AUTO_TEST_CASE(the_thread_budget_is_the_available_threads_capped) {
  using dualgibbs::Execution;
  const unsigned all = dualgibbs::available_threads();
  BOOST_TEST(Execution{}.thread_budget() == all);
  BOOST_TEST(Execution{1}.thread_budget() == 1u);
  BOOST_TEST(Execution{all + 8}.thread_budget() == all);  // never more than the process may use
  // Members that share this machine share its hardware threads (at least one each).
  CountedGroup crowded(4, 4);
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const unsigned per_member = dualgibbs::available_threads(&crowded);
  BOOST_TEST(per_member == std::max(1u, std::min(all, hardware / 4)));
  const Execution on_crowded{0, &crowded};
  BOOST_TEST(on_crowded.thread_budget() == per_member);
  CountedGroup alone(1, 4);  // a group of one shares nothing: all the threads
  BOOST_TEST(dualgibbs::available_threads(&alone) == all);
}

BOOST_AUTO_TEST_SUITE_END()
