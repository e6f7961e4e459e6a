// Process-level cases (issue 12, part 4): each runs tether_reliability_process_helper in a
// child process with a bound, and checks how it ended.
#include <gtest/gtest.h>
#include <tether/tether.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

// run: the helper's exit code for mode (128 + the signal when one ended it, as the shell
// that runs it reports; 124 for a hang that timeout ended).
int run(const std::string& mode, std::string* output) {
  const std::string cmd = "timeout 60 " + std::string(TETHER_RELIABILITY_HELPER) + " " + mode + " 2>&1";
  FILE* child = popen(cmd.c_str(), "r");
  if (child == nullptr) return -2;
  char buf[512];
  while (fgets(buf, sizeof buf, child) != nullptr) *output += buf;
  const int status = pclose(child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Process, ExitWithLiveRunnersExecutorsActorsAndGraphs) {
  std::string out;
  EXPECT_EQ(run("exit-live", &out), 0) << out;
}

TEST(Process, ReturnFromMainWithLiveObjects) {
  std::string out;
  EXPECT_EQ(run("return-live", &out), 0) << out;
}

TEST(Process, ProcessDirectedSignalLandsOnAnApplicationThread) {
  std::string out;
  EXPECT_EQ(run("signal", &out), 0) << out;
}

TEST(Process, ThreadLimitReachedGivesThreadCreate) {
  std::string out;
  EXPECT_EQ(run("nproc", &out), 0) << out;
}

// A runner's callback (target or nested) that ends its thread with pthread_exit: the
// runner fails with TETHER_E_UNKNOWN_EXCEPTION saying so, its arg dropped once, the library
// usable after. (It used to abort: "FATAL: exception not rethrown", as catch (...) swallowed
// glibc's forced unwind.)
TEST(Process, CallbackCallingPthreadExitFailsTheRunner) {
  std::string out;
  EXPECT_EQ(run("pthread-exit", &out), 0) << out;
}

// An executor's task that ends its thread: the thread owes the queue behind it, so the
// process aborts with a message that says what happened (not a bare terminate).
TEST(Process, ExecutorTaskCallingPthreadExitAbortsWithAMessage) {
  std::string out;
  EXPECT_EQ(run("pthread-exit-executor", &out), 128 + SIGABRT) << out;
  EXPECT_NE(out.find("ended its thread (pthread_exit or cancellation)"), std::string::npos) << out;
}

// ---- C++ user code throwing what is not a std::exception, from a destructor too ---------

struct ThrowsOnDestruction {
  ~ThrowsOnDestruction() noexcept(false) { throw 7; }
};

tether_status throws_int(tether_task*, void*) { throw 42; }
tether_status throwing_destructor(tether_task*, void*) {
  ThrowsOnDestruction d;
  return TETHER_OK;  // d's destructor throws as the callback returns
}
tether_status throws_runtime_error(tether_task*, void*) { throw std::runtime_error("boom"); }

int32_t error_code_of(tether_fn fn) {
  tether_runner r{0};
  EXPECT_EQ(tether_runner_start(nullptr, fn, nullptr, nullptr, &r), TETHER_OK);
  EXPECT_EQ(tether_runner_join_all(r, INT64_C(20) * 1000 * 1000 * 1000), TETHER_OK);
  tether_error e{0};
  EXPECT_EQ(tether_runner_error(r, &e), TETHER_OK);
  const int32_t code = tether_error_code(e);
  (void)tether_error_release(e);
  EXPECT_EQ(tether_runner_release(r), TETHER_OK);
  return code;
}

TEST(Process, NonStdExceptionsAndThrowingDestructorsAreKept) {
  EXPECT_EQ(error_code_of(&throws_int), TETHER_E_UNKNOWN_EXCEPTION);
  EXPECT_EQ(error_code_of(&throwing_destructor), TETHER_E_UNKNOWN_EXCEPTION);
  EXPECT_EQ(error_code_of(&throws_runtime_error), TETHER_E_EXCEPTION);
}

}  // namespace
