// The child process of the process-level reliability cases (process_test.cpp): each mode
// does one thing a whole process does, and says how it went through its exit code.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <tether/tether.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::atomic<bool> g_release{false};

tether_status wait_forever(tether_task* t, void*) {
  while (!tether_task_stop_requested(t) && !g_release.load()) sched_yield();
  return TETHER_OK;
}
tether_status nested_target(tether_task* t, void* arg) {
  if (tether_task_spawn(t, "nested", &wait_forever, arg, nullptr) != TETHER_OK) return 1;
  return wait_forever(t, arg);
}
tether_status ctor(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status busy_method(tether_task*, void*, void*) {
  while (!g_release.load()) sched_yield();
  return TETHER_OK;
}
tether_status node(tether_task*, void*, void*, void* const*, size_t, void** out) {
  *out = nullptr;
  return TETHER_OK;
}

// live_objects: a runner with a nested thread, an executor, an actor busy in a method,
// and a compiled graph over a second actor, all left live.
int live_objects() {
  tether_runner r{0};
  if (tether_runner_start(nullptr, &nested_target, nullptr, nullptr, &r) != TETHER_OK) return 10;
  tether_executor e{0};
  if (tether_executor_create(nullptr, &e) != TETHER_OK) return 11;
  tether_actor busy{0}, host{0};
  if (tether_actor_create(nullptr, &ctor, nullptr, nullptr, nullptr, &busy) != TETHER_OK) return 12;
  if (tether_actor_call(busy, nullptr, &busy_method, nullptr, nullptr, nullptr) != TETHER_OK) return 13;
  if (tether_actor_create(nullptr, &ctor, nullptr, nullptr, nullptr, &host) != TETHER_OK) return 14;
  tether_graph g{0};
  uint32_t n = 0;
  tether_compiled c{0};
  if (tether_graph_create(&g) != TETHER_OK || tether_graph_add_node(g, host, nullptr, &node, nullptr, nullptr, &n) != TETHER_OK ||
      tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n) != TETHER_OK || tether_graph_set_outputs(g, &n, 1) != TETHER_OK ||
      tether_graph_compile(g, nullptr, &c) != TETHER_OK) {
    return 15;
  }
  tether_future f{0};
  if (tether_compiled_execute(c, nullptr, nullptr, &f) != TETHER_OK) return 16;
  return 0;
}

// ---- a process-directed signal lands on an application thread ------------------------

std::atomic<long> g_handler_tid{0};
std::atomic<int> g_signals{0}, g_elsewhere{0};
long main_tid = 0;
void on_usr1(int) {
  const long tid = syscall(SYS_gettid);
  if (tid != main_tid) g_elsewhere.fetch_add(1);
  g_signals.fetch_add(1);
}

int signal_mode() {
  main_tid = syscall(SYS_gettid);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = &on_usr1;
  sigaction(SIGUSR1, &sa, nullptr);
  if (int rc = live_objects(); rc != 0) return rc;
  for (int i = 0; i < 200; ++i) {
    kill(getpid(), SIGUSR1);  // to the process: the kernel picks a thread not blocking it
    while (g_signals.load() <= i) sched_yield();
  }
  // Returns with the objects live and their threads running, as return-live does (setting
  // g_release here let threads finish unjoined before exit, which TSan reports as a leak).
  return g_elsewhere.load() == 0 ? 0 : 20;
}

// ---- the thread limit reached for real ------------------------------------------------

int nproc_mode() {
  if (geteuid() == 0) {  // as root the limit does not apply: become an unprivileged user
    if (setgid(65534) != 0 || setuid(65534) != 0) return 30;
  }
  struct rlimit lim{40, 40};
  if (setrlimit(RLIMIT_NPROC, &lim) != 0) return 31;
  std::vector<tether_runner> runners;
  tether_status last = TETHER_OK;
  for (int i = 0; i < 200 && last == TETHER_OK; ++i) {
    tether_runner r{0};
    last = tether_runner_start(nullptr, &nested_target, nullptr, nullptr, &r);
    if (last == TETHER_OK) runners.push_back(r);
  }
  g_release.store(true);
  int bad_outcomes = 0;
  for (tether_runner r : runners) {
    if (tether_runner_join_all(r, INT64_C(30) * 1000 * 1000 * 1000) != TETHER_OK) ++bad_outcomes;
    if (tether_runner_release(r) != TETHER_OK) ++bad_outcomes;
  }
  std::printf("started %zu runners before %s\n", runners.size(), tether_status_name(last));
  if (last != TETHER_E_THREAD_CREATE) return 32;
  return bad_outcomes == 0 && tether_debug_unjoined_threads() == 0 ? 0 : 33;
}

// ---- a callback that calls pthread_exit ---------------------------------------------

std::atomic<int> g_drops{0};
void count_drop(void*) { g_drops.fetch_add(1); }

tether_status exits_thread(tether_task*, void*) { pthread_exit(nullptr); }
tether_status spawns_exiting_thread(tether_task* t, void*) {
  if (tether_task_spawn(t, "exits", &exits_thread, nullptr, &count_drop) != TETHER_OK) return 1;
  return TETHER_OK;
}

// runner_ending_thread: a runner whose target (or a nested thread) calls pthread_exit
// fails with TETHER_E_UNKNOWN_EXCEPTION naming the thread and abi::__forced_unwind, drops
// its arg once, and leaves the library usable.
int runner_ending_thread(tether_fn target, const char* thread_name, int args) {
  const int drops_before = g_drops.load();
  tether_runner r{0};
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.name = "ends";
  if (tether_runner_start(&o, target, nullptr, &count_drop, &r) != TETHER_OK) return 40;
  const tether_status joined = tether_runner_join_all(r, INT64_C(20) * 1000 * 1000 * 1000);
  int32_t state = 0;
  (void)tether_runner_poll(r, &state);
  tether_error e{0};
  if (joined != TETHER_OK || state != TETHER_FAILED || tether_runner_error(r, &e) != TETHER_OK) return 41;
  char buf[3][256];
  (void)tether_error_message(e, buf[0], sizeof buf[0]);
  (void)tether_error_thread_name(e, buf[1], sizeof buf[1]);
  (void)tether_error_type_name(e, buf[2], sizeof buf[2]);
  const std::string message = buf[0], thread = buf[1], type = buf[2];
  std::printf("join_all %s, state %d, code %s, message '%s', thread '%s', type '%s'\n",
              tether_status_name(joined), state, tether_status_name(tether_error_code(e)), message.c_str(),
              thread.c_str(), type.c_str());
  const bool as_expected = tether_error_code(e) == TETHER_E_UNKNOWN_EXCEPTION &&
                           message.find("pthread_exit") != std::string::npos && thread == thread_name &&
                           type == "abi::__forced_unwind";
  (void)tether_error_release(e);
  if (!as_expected) return 42;
  if (tether_runner_release(r) != TETHER_OK) return 43;
  if (g_drops.load() != drops_before + args) return 44;  // each arg (runner's, nested thread's) once
  // The library still works: a plain runner succeeds.
  if (tether_runner_start(nullptr, [](tether_task*, void*) -> tether_status { return TETHER_OK; }, nullptr, nullptr,
                          &r) != TETHER_OK ||
      tether_runner_join_all(r, INT64_C(20) * 1000 * 1000 * 1000) != TETHER_OK || tether_runner_release(r) != TETHER_OK) {
    return 45;
  }
  return 0;
}

int pthread_exit_mode() {
  if (int rc = runner_ending_thread(&exits_thread, "ends", 1); rc != 0) return rc;
  return runner_ending_thread(&spawns_exiting_thread, "exits", 2) == 0 ? 0 : 50;
}

// pthread_exit_executor_mode: an executor's thread cannot be ended by its task (the queue
// behind it would hang): the process aborts with a message saying so.
int pthread_exit_executor_mode() {
  tether_executor ex{0};
  if (tether_executor_create(nullptr, &ex) != TETHER_OK) return 60;
  tether_future f{0};
  if (tether_executor_submit(ex, &exits_thread, nullptr, nullptr, &f) != TETHER_OK) return 61;
  (void)tether_future_wait(f, INT64_C(20) * 1000 * 1000 * 1000);
  return 62;  // not reached: the process aborts first
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string mode = argv[1];
  if (mode == "exit-live") {
    if (int rc = live_objects(); rc != 0) return rc;
    std::exit(0);
  }
  if (mode == "return-live") return live_objects();
  if (mode == "signal") return signal_mode();
  if (mode == "nproc") return nproc_mode();
  if (mode == "pthread-exit") return pthread_exit_mode();
  if (mode == "pthread-exit-executor") return pthread_exit_executor_mode();
  return 3;
}
