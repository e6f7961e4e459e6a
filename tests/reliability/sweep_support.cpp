#include "sweep_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "alloc_fault.h"

namespace sweep {
namespace {

std::atomic<int> g_drops[kMaxArgs];
std::atomic<size_t> g_handed{0};
std::atomic<uint64_t> g_seen{0};

bool wait_for(bool (*pred)(), std::chrono::seconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

bool all_joined() { return tether_debug_unjoined_threads() == 0; }
bool all_dropped() {
  for (size_t i = 0; i < g_handed.load(); ++i) {
    if (g_drops[i].load() < 1) return false;
  }
  return true;
}

// thread_names: the names of this process's threads, for a failure message.
std::string thread_names() {
  std::string names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    FILE* f = std::fopen((task.path() / "comm").c_str(), "r");
    if (f == nullptr) continue;
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f) != nullptr) names += std::string(buf, strcspn(buf, "\n")) + " ";
    std::fclose(f);
  }
  return names;
}

// settle: every library thread joined and every arg's drop in, within a bound.
void settle() {
  EXPECT_TRUE(wait_for(&all_joined, std::chrono::seconds(20)))
      << tether_debug_unjoined_threads() << " threads unjoined; threads: " << thread_names();
  (void)wait_for(&all_dropped, std::chrono::seconds(5));
}

}  // namespace

void reset_args() {
  for (auto& d : g_drops) d.store(0);
  g_handed.store(0);
}

void* new_arg() {
  const size_t i = g_handed.fetch_add(1);
  if (i >= kMaxArgs) std::abort();  // a scenario handing out this many is a test bug
  return &g_drops[i];
}

void drop_arg(void* token) { static_cast<std::atomic<int>*>(token)->fetch_add(1); }
int drops_of(void* token) { return static_cast<std::atomic<int>*>(token)->load(); }

std::string every_arg_dropped_once() {
  std::string bad;
  for (size_t i = 0; i < g_handed.load(); ++i) {
    const int n = g_drops[i].load();
    if (n != 1) bad += "arg " + std::to_string(i) + " dropped " + std::to_string(n) + " times; ";
  }
  return bad;
}

void reset_seen() { g_seen.store(0); }
void saw(tether_status rc) {
  if (rc >= 0 && rc < 64) g_seen.fetch_or(uint64_t{1} << rc);
}
bool was_seen(tether_status rc) { return rc >= 0 && rc < 64 && (g_seen.load() & (uint64_t{1} << rc)) != 0; }

bool ok_or_fault(tether_status rc) {
  return rc == TETHER_OK || rc == TETHER_E_NO_MEMORY || rc == TETHER_E_THREAD_CREATE;
}

bool fault_error(int32_t code, int64_t user_code) {
  if (code == TETHER_E_NO_MEMORY || code == TETHER_E_THREAD_CREATE) return true;
  return code == TETHER_E_TASK_FAILED && (user_code == TETHER_E_NO_MEMORY || user_code == TETHER_E_THREAD_CREATE);
}

namespace {

void run_once(Scenario& s) {
  reset_args();
  reset_seen();
  s.act();
}

void finish_run(Scenario& s, const std::string& point) {
  SCOPED_TRACE(std::string(s.name()) + " " + point);
  settle();
  s.check();
  EXPECT_EQ(every_arg_dropped_once(), "");
}

}  // namespace

bool run_point(Scenario& s, const std::string& mode, uint64_t n) {
  if (mode == "alloc") {
    fault::arm(n);
    run_once(s);
    (void)fault::disarm();
    finish_run(s, "allocation " + std::to_string(n));
    return fault::failed();
  }
  tether_debug_fail_thread_create(static_cast<uint32_t>(n));
  run_once(s);
  tether_runner probe{0};
  const tether_status probe_rc = tether_runner_start(
      nullptr, [](tether_task*, void*) -> tether_status { return TETHER_OK; }, nullptr, nullptr, &probe);
  tether_debug_fail_thread_create(UINT32_MAX);
  if (probe_rc == TETHER_OK) {
    EXPECT_EQ(tether_runner_release(probe), TETHER_OK);
  } else {
    EXPECT_EQ(probe_rc, TETHER_E_THREAD_CREATE);
  }
  finish_run(s, "thread creation " + std::to_string(n));
  const bool delivered = probe_rc == TETHER_OK;
  if (delivered) {
    EXPECT_TRUE(was_seen(TETHER_E_THREAD_CREATE)) << s.name() << ": thread creation " << n << " failed and nothing reported it";
  }
  return delivered;
}

SweepCount sweep_cold(const char* scenario, const std::string& mode) {
  SweepCount count;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (uint64_t n = mode == "alloc" ? 1 : 0; n < 100000; ++n) {
    const std::string cmd = "TETHER_SWEEP_SCENARIO=" + std::string(scenario) + " TETHER_SWEEP_MODE=" + mode +
                            " TETHER_SWEEP_POINT=" + std::to_string(n) + " timeout 60 " + self +
                            " --gtest_filter=FaultSweepChild.Point 2>&1";
    FILE* child = popen(cmd.c_str(), "r");
    EXPECT_NE(child, nullptr);
    if (child == nullptr) break;
    std::string out;
    char buf[4096];
    while (fgets(buf, sizeof buf, child) != nullptr) out += buf;
    const int status = pclose(child);
    EXPECT_EQ(status, 0) << scenario << " " << mode << " point " << n << " (cold):\n" << out;
    if (status != 0) break;
    if (out.find("[point delivered]") == std::string::npos) break;
    ++count.points;
    if (out.find("[point reported]") != std::string::npos) ++count.fault_visible;
  }
  return count;
}

SweepCount sweep_allocations(Scenario& s) {
  SweepCount count;
  fault::arm(0);
  run_once(s);
  const uint64_t needed = fault::disarm();
  finish_run(s, "counting run");
  EXPECT_GT(needed, 0u);
  count.counting_run = needed;
  // A run may need a few allocations more or fewer than the counting run (threads
  // interleave): the sweep goes on while the armed allocation was reached.
  for (uint64_t n = 1; n <= 100000; ++n) {
    const bool delivered = run_point(s, "alloc", n);
    if (::testing::Test::HasFailure()) break;  // one broken point is enough to read
    if (!delivered) break;
    ++count.points;
    if (was_seen(TETHER_E_NO_MEMORY)) ++count.fault_visible;
  }
  return count;
}

SweepCount sweep_threads(Scenario& s) {
  SweepCount count;
  for (uint32_t k = 0; k < 10000; ++k) {
    const bool delivered = run_point(s, "thread", k);
    if (::testing::Test::HasFailure() || !delivered) break;
    ++count.points;
    ++count.fault_visible;  // run_point failed the test otherwise
  }
  return count;
}

}  // namespace sweep
