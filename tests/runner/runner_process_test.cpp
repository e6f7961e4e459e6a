// runner_process_test.cpp: process-level behaviour, run in a child process of the helper
// program (process_helper.cpp) so that each scenario owns its process: exit with live
// threads, and fork().
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

#ifndef TETHER_PROCESS_HELPER
#error "TETHER_PROCESS_HELPER must name the helper executable"
#endif

extern char **environ;

namespace {

using namespace tt;

struct RunResult {
  bool started = false;
  bool timed_out = false;
  int wait_status = 0;
  std::string output;  // the helper's stdout and stderr

  [[nodiscard]] bool exited() const { return WIFEXITED(wait_status); }
  [[nodiscard]] int exit_code() const { return WEXITSTATUS(wait_status); }
  [[nodiscard]] bool signaled() const { return WIFSIGNALED(wait_status); }
  [[nodiscard]] std::string describe() const {
    std::ostringstream os;
    if (!started) os << "did not start";
    else if (timed_out) os << "timed out (killed)";
    else if (signaled()) os << "killed by signal " << WTERMSIG(wait_status);
    else os << "exit code " << exit_code();
    os << "\n--- helper output ---\n" << output;
    return os.str();
  }
};

// run_helper: runs the helper with `mode`, its output in a file, and waits for it with a
// bound; a helper that does not end in time is killed. `no_leak_check` turns LeakSanitizer
// off in the helper (ASan builds): a forked child of a multi-threaded process that calls
// exit() cannot have its leaks checked (its parent's threads do not exist there).
// `env` sets ("NAME=value") or removes ("NAME") environment variables for the helper.
RunResult run_helper(const std::string &mode, bool no_leak_check = false,
                     std::chrono::seconds bound = std::chrono::seconds(60), const std::vector<std::string> &env = {}) {
  RunResult res;
  char path[] = "/tmp/tether-helper-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return res;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  const std::string exe = TETHER_PROCESS_HELPER;
  char *argv[] = {const_cast<char *>(exe.c_str()), const_cast<char *>(mode.c_str()), nullptr};
  std::vector<std::string> env_strings;
  std::string asan = "ASAN_OPTIONS=";
  auto replaced = [&](const char *var) {  // var is "NAME=value"
    for (const std::string &e : env) {
      const std::string name = e.substr(0, e.find('=')) + "=";
      if (std::strncmp(var, name.c_str(), name.size()) == 0) return true;
    }
    return false;
  };
  for (char **e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ASAN_OPTIONS=", 13) == 0) asan = *e;
    else if (!replaced(*e)) env_strings.emplace_back(*e);
  }
  for (const std::string &e : env) {
    if (e.find('=') != std::string::npos) env_strings.push_back(e);
  }
  if (no_leak_check) asan += (asan.size() > 13 ? ":" : "") + std::string("detect_leaks=0");
  if (asan.size() > 13) env_strings.push_back(asan);
  std::vector<char *> envp;
  for (std::string &e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fd);
  if (rc == 0) {
    res.started = true;
    auto waiter = std::async(std::launch::async, [pid] {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    });
    if (waiter.wait_for(bound) != std::future_status::ready) {
      res.timed_out = true;
      kill(pid, SIGKILL);
    }
    res.wait_status = waiter.get();
  }
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  res.output = ss.str();
  unlink(path);
  return res;
}

class ExitWithLiveThreads : public ::testing::TestWithParam<const char *> {};

// A process whose main returns while a runner's target (and a nested thread) block forever
// exits with code 0: no crash, no hang in the library's teardown.
TEST_P(ExitWithLiveThreads, ExitsCleanly) {
  const RunResult res = run_helper(GetParam());
  ASSERT_TRUE(res.started);
  EXPECT_FALSE(res.timed_out) << res.describe();
  EXPECT_TRUE(res.exited()) << res.describe();
  EXPECT_EQ(0, res.exit_code()) << res.describe();
}

INSTANTIATE_TEST_SUITE_P(Process, ExitWithLiveThreads,
                         ::testing::Values("exit-blocked", "exit-blocked-nowait", "exit-join-pending"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           std::string n = i.param;
                           for (char &c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

// The library's serving threads ask for half the time slice the OS gives them, at least
// 0.1 ms (src/core/time_slice.h): with TETHER_TIME_SLICE_NS unset, junk, signed, too short
// or too long, an executor's thread and an actor's own thread have half the main thread's;
// "0" leaves them at the OS default (the main thread's); a value from 100000 to 100000000 is
// taken. The main thread, having run a manual executor, keeps its own. Skipped where a
// thread cannot set its own slice (Linux before 6.12, or a seccomp filter).
TEST(Process, ServingThreadsAskForAShorterTimeSlice) {
#if !defined(__linux__)
  GTEST_SKIP() << "time slices are asked of Linux only";
#endif
  constexpr long long kHalf = -2, kOsDefault = -1;
  struct Case {
    const char *setting;  // nullptr: unset
    long long executor;   // a slice in ns, kHalf or kOsDefault
  };
  const Case cases[] = {{nullptr, kHalf},         {"0", kOsDefault}, {"500000", 500000}, {"100000000", 100000000},
                        {"junk", kHalf},          {"-5", kHalf},     {"50", kHalf},      {"100000001", kHalf},
                        {"", kHalf}};
  for (const Case &c : cases) {
    const std::vector<std::string> env = {c.setting != nullptr ? std::string("TETHER_TIME_SLICE_NS=") + c.setting
                                                               : std::string("TETHER_TIME_SLICE_NS")};
    const RunResult res = run_helper("time-slice", false, std::chrono::seconds(60), env);
    const std::string what = std::string("TETHER_TIME_SLICE_NS=") + (c.setting ? c.setting : "(unset)");
    ASSERT_TRUE(res.started) << what;
    ASSERT_FALSE(res.timed_out) << what << ": " << res.describe();
    ASSERT_TRUE(res.exited() && res.exit_code() == 0) << what << ": " << res.describe();
    unsigned long long settable = 0, own = 0, executor = 0, actor = 0, own_after = 0;
    ASSERT_EQ(5, std::sscanf(res.output.c_str(), "settable=%llu own=%llu executor=%llu actor=%llu own_after_manual=%llu",
                             &settable, &own, &executor, &actor, &own_after))
        << what << ": " << res.output;
    if (settable != 300000) GTEST_SKIP() << "this system takes no time slice requests (Linux before 6.12, or a filter)";
    const unsigned long long want = c.executor == kOsDefault ? own
                                    : c.executor == kHalf     ? std::max(100000ULL, own / 2)
                                                              : static_cast<unsigned long long>(c.executor);
    EXPECT_EQ(want, executor) << what;
    EXPECT_EQ(want, actor) << what;
    EXPECT_EQ(own, own_after) << what << ": a manual executor's runner is the user's thread";
  }
}

// A library thread on its caller's CPU batches (SCHED_BATCH) while it is streamed to and
// preempts (SCHED_OTHER) for waited calls and futures waited at once
// (src/core/wake_preemption.h); a policy its user set, or one it started under, stays.
// TETHER_BATCH_STREAMS=0 keeps SCHED_OTHER; unset or other values ("1", "00") adapt.
// Skipped where threads cannot be pinned.
TEST(Process, ServingThreadsBatchOnlyForStreamsOnTheirCpu) {
#if !defined(__linux__)
  GTEST_SKIP() << "policies are switched on Linux only";
#endif
  const char *settings[] = {nullptr, "0", "1", "00"};
  for (const char *setting : settings) {
    const std::vector<std::string> env = {setting != nullptr ? std::string("TETHER_BATCH_STREAMS=") + setting
                                                             : std::string("TETHER_BATCH_STREAMS")};
    const std::string what = std::string("TETHER_BATCH_STREAMS=") + (setting ? setting : "(unset)");
    const RunResult res = run_helper("wake-preemption", false, std::chrono::seconds(120), env);
    ASSERT_TRUE(res.started) << what;
    ASSERT_FALSE(res.timed_out) << what << ": " << res.describe();
    ASSERT_TRUE(res.exited() && res.exit_code() == 0) << what << ": " << res.describe();
    if (res.output.find("unpinnable") != std::string::npos) GTEST_SKIP() << "threads cannot be pinned here";
    int stream = -2, waited = -2, stream_again = -2, future = -2, user_idle = -2, inherited_batch = -2;
    ASSERT_EQ(6, std::sscanf(res.output.c_str(),
                             "stream=%d waited=%d stream_again=%d future=%d user_idle=%d inherited_batch=%d", &stream,
                             &waited, &stream_again, &future, &user_idle, &inherited_batch))
        << what << ": " << res.output;
    const bool adapts = setting == nullptr || std::string(setting) != "0";
    EXPECT_EQ(adapts ? SCHED_BATCH : SCHED_OTHER, stream) << what;
    EXPECT_EQ(SCHED_OTHER, waited) << what;
    EXPECT_EQ(adapts ? SCHED_BATCH : SCHED_OTHER, stream_again) << what;
    EXPECT_EQ(SCHED_OTHER, future) << what;
    EXPECT_EQ(SCHED_IDLE, user_idle) << what << ": the user's policy";
    EXPECT_EQ(SCHED_BATCH, inherited_batch) << what << ": the policy it started under";
  }
}

// After fork(), the child's handle calls return TETHER_E_FORKED (poll, join, start, ...),
// nothing of the parent's runs or is dropped there; the parent's runner carries on.
TEST(Process, ForkChildGetsForkedParentUnaffected) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support a child that makes threads after a multithreaded fork";
#endif
  const RunResult res = run_helper("fork");
  ASSERT_TRUE(res.started);
  EXPECT_FALSE(res.timed_out) << res.describe();
  EXPECT_TRUE(res.exited()) << res.describe();
  EXPECT_EQ(0, res.exit_code()) << res.describe();
}

// A callback that forks returns in the child, where the library ends the process (exit
// code 0) before anything queued behind the callback runs: an actor's fire-and-forget
// method, an arg's drop after its method, a method called with a future. The parent runs
// every call. Leaks unchecked: the child ends with exit() (see fork-exit).
TEST(Process, ForkInsideACallbackEndsTheChild) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support fork() in a multithreaded process";
#endif
  const RunResult res = run_helper("fork-in-callback", /*no_leak_check=*/true);
  ASSERT_TRUE(res.started);
  EXPECT_FALSE(res.timed_out) << res.describe();
  EXPECT_TRUE(res.exited()) << res.describe();
  EXPECT_EQ(0, res.exit_code()) << res.describe();
}

// The same child ending with exit() (static destructors and atexit handlers run there): the
// library must neither join nor drop the parent's objects in the child.
TEST(Process, ForkChildExitDoesNotTouchParentThreads) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support a child that makes threads after a multithreaded fork";
#endif
  const RunResult res = run_helper("fork-exit", /*no_leak_check=*/true);
  ASSERT_TRUE(res.started);
  EXPECT_FALSE(res.timed_out) << res.describe();
  EXPECT_TRUE(res.exited()) << res.describe();
  EXPECT_EQ(0, res.exit_code()) << res.describe();
}

// Fork directly from this (multi-threaded, gtest) process too. The child makes tether calls,
// then execs (the helper's exit-with mode reports
// the finding as its exit code). Exec rather than _exit also keeps valgrind from checking
// the child's heap, whose owners (the parent's other threads) do not exist there.
TEST(Process, ForkFromTestProcessChildGetsForked) {
  Gate gate;
  Counter drops;
  Runner r;
  r.open_on_exit({&gate});
  ASSERT_EQ(TETHER_OK, start_runner(nullptr, [&](tether_task *) {
    (void)gate.wait_for(kLong);
    return tether_status{TETHER_OK};
  }, &drops, r.out()));
  const tether_runner h = r.get();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    int32_t s = -1;
    int code = 0;
    if (tether_runner_poll(h, &s) != TETHER_E_FORKED) code = 1;
    else if (tether_runner_join(h, -1) != TETHER_E_FORKED) code = 2;
    else if (tether_runner_release(h) != TETHER_E_FORKED) code = 3;
    char code_text[8];
    std::snprintf(code_text, sizeof code_text, "%d", code);
    char mode[] = "exit-with";
    char *child_argv[] = {const_cast<char *>(TETHER_PROCESS_HELPER), mode, code_text, nullptr};
    execv(TETHER_PROCESS_HELPER, child_argv);
    _exit(code == 0 ? 100 : code);  // exec failed
  }
  auto waiter = std::async(std::launch::async, [pid] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  });
  if (waiter.wait_for(std::chrono::seconds(60)) != std::future_status::ready) kill(pid, SIGKILL);
  const int status = waiter.get();
  EXPECT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(0, WEXITSTATUS(status)) << "child check " << WEXITSTATUS(status)
                                    << " failed (100: could not exec the helper)";
  EXPECT_EQ(TETHER_RUNNING, r.state());
  gate.set();
  EXPECT_EQ(TETHER_OK, tether_runner_join_all(h, kLongNs));
  EXPECT_EQ(TETHER_SUCCEEDED, r.state());
  EXPECT_EQ(TETHER_OK, r.release());
  EXPECT_TRUE(drops.wait_for(1, kLong));
  EXPECT_EQ(1, drops.get());
}

}  // namespace
