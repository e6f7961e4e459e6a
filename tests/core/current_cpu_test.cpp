// Unit tests of platform::current_cpu (platform.h): where the calling thread runs, read
// from the thread's rseq area where glibc registered one, else from sched_getcpu. Pinned
// to each CPU it may use in turn, a thread reads that CPU, on the main thread and on a
// thread started after the library loaded (each thread has an area of its own).
#include <gtest/gtest.h>

#include <sched.h>

#include <thread>
#include <vector>

#include "platform/platform.h"

namespace core_test {
namespace {

// allowed: the CPUs this thread may run on.
std::vector<int> allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// reads_each_cpu_pinned: pins the calling thread to each CPU of `cpus` and expects
// current_cpu to say so; the thread's affinity is put back afterwards.
void reads_each_cpu_pinned(const std::vector<int>& cpus) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  for (int cpu : cpus) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0) << cpu;  // returns on that CPU
    EXPECT_EQ(tether::platform::current_cpu(), cpu);
    EXPECT_EQ(tether::platform::current_cpu(), sched_getcpu());
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

TEST(CurrentCpu, ReadsTheCpuAThreadIsPinnedTo) {
  const std::vector<int> cpus = allowed();
  ASSERT_FALSE(cpus.empty());
  reads_each_cpu_pinned(cpus);
  std::thread later([&] { reads_each_cpu_pinned(cpus); });
  later.join();
}

}  // namespace
}  // namespace core_test
