// process_helper.cpp: a small program the process tests run as a child process, one
// scenario per mode. It reports through its exit code (0 = as the contract says) and
// explains any finding on stderr.
//
//   exit-blocked         main returns while a target and a nested thread block forever
//   exit-blocked-nowait  the same after release_nowait (the control thread is waiting)
//   exit-join-pending    the same while another thread is blocked in tether_runner_join
//   fork                 after fork(), every parent handle in the child is TETHER_E_FORKED; new ones work
//                        (the child calls _exit); the parent's runner is unaffected
//   fork-exit            the same, but the child ends with exit(): the library's static
//                        teardown must not touch the parent's threads there
//   fork-in-callback     an actor method (fire and forget, and with a future) and an arg's
//                        drop fork: each child ends (exit code 0) as the callback returns
//                        there, before any call queued behind it runs in it; the parent
//                        runs them all
//   exit-with N          exits with code N at once (what a forked test child execs)
//   time-slice           prints the time slices (Linux sched_getattr's sched_runtime, ns) of
//                        a plain thread that asked for 300000 itself, the main thread, an
//                        executor's thread, an actor's own thread, and the main thread
//                        again after it ran a manual executor
//   wake-preemption      pins itself and actors' own threads to its CPU and prints an actor
//                        thread's policy (0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE) once
//                        it parked after each phase: a stream of fire-and-forget calls,
//                        waited calls, a stream again, calls with a future waited at once;
//                        then one whose method set SCHED_IDLE, and one started under
//                        SCHED_BATCH, each after a stream and waited calls
#include <tether/tether.h>

#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

namespace {

// Forever: a wait that never ends (the predicate is never true).
struct Forever {
  std::mutex mu;
  std::condition_variable cv;
  void wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [] { return false; });
  }
};

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void set() {
    std::lock_guard<std::mutex> lk(mu);
    open = true;
    cv.notify_all();
  }
  bool wait_for(std::chrono::seconds d) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, d, [&] { return open; });
  }
};

// Objects the blocked threads use: never destroyed (they are still in use at exit).
Forever *g_forever = new Forever;
Gate *g_started = new Gate;
Gate *g_nested_started = new Gate;

tether_status blocked_nested(tether_task *, void *) {
  g_nested_started->set();
  g_forever->wait();
  return TETHER_OK;
}

tether_status blocked_target(tether_task *t, void *) {
  (void)tether_task_spawn(t, "helper-nested", blocked_nested, nullptr, nullptr);
  g_started->set();
  g_forever->wait();
  return TETHER_OK;
}

int fail(const char *what) {
  std::fprintf(stderr, "process_helper: %s\n", what);
  return 3;
}

int exit_blocked(const std::string &mode) {
  tether_runner_options o;
  tether_runner_options_init(&o);
  o.name = "helper-blocked";
  tether_runner r{};
  if (tether_runner_start(&o, blocked_target, nullptr, nullptr, &r) != TETHER_OK) return fail("start failed");
  if (!g_started->wait_for(std::chrono::seconds(20))) return fail("target did not start");
  if (!g_nested_started->wait_for(std::chrono::seconds(20))) return fail("nested did not start");
  if (mode == "exit-blocked-nowait") {
    if (tether_runner_release_nowait(r) != TETHER_OK) return fail("release_nowait failed");
  } else if (mode == "exit-join-pending") {
    Gate *joining = new Gate;
    std::thread([r, joining] {
      joining->set();
      (void)tether_runner_join_all(r, -1);
    }).detach();
    if (!joining->wait_for(std::chrono::seconds(20))) return fail("joiner did not start");
  }
  return 0;  // main returns: static destructors and atexit handlers run with live threads
}

// ---------------------------------------------------------------------------------------
// fork

std::atomic<int> g_child_fn_runs{0};
std::atomic<int> g_child_drops{0};
tether_status child_fn(tether_task *, void *) {
  g_child_fn_runs.fetch_add(1);
  return TETHER_OK;
}
void child_drop(void *) { g_child_drops.fetch_add(1); }
void child_notify(void *) { g_child_fn_runs.fetch_add(1); }

void child_say(const char *msg) {
  // write(2) only: the child of a multi-threaded process may not use stdio locks.
  (void)!write(2, msg, std::strlen(msg));
}

// run_child_checks: the checks, numbered; returns the number of the first that failed.
int run_child_checks(tether_runner r, tether_error parent_error) {
  int check = 0;
  auto expect_forked = [&](tether_status st, const char *what) {
    ++check;
    if (st != TETHER_E_FORKED) {
      child_say("child: ");
      child_say(what);
      child_say(" returned ");
      child_say(tether_status_name(st));
      child_say(", expected TETHER_E_FORKED\n");
      return false;
    }
    return true;
  };
  int32_t s = -1;
  size_t n = 0;
  tether_error e{};
  void *out = nullptr;
  tether_runner fresh{};
  if (!expect_forked(tether_runner_poll(r, &s), "poll")) return check;
  if (!expect_forked(tether_runner_join(r, 0), "join(0)")) return check;
  if (!expect_forked(tether_runner_join(r, INT64_C(1000000000)), "join(1s)")) return check;
  if (!expect_forked(tether_runner_join_all(r, -1), "join_all(forever)")) return check;
  if (!expect_forked(tether_runner_live_threads(r, &n), "live_threads")) return check;
  if (!expect_forked(tether_runner_error(r, &e), "runner_error")) return check;
  if (!expect_forked(tether_runner_error_at(r, 0, &e), "runner_error_at")) return check;
  if (!expect_forked(tether_runner_take_result(r, &out), "take_result")) return check;
  if (!expect_forked(tether_runner_report_error(r, TETHER_E_TASK_FAILED, 1, "child"), "report_error"))
    return check;
  if (!expect_forked(tether_runner_on_done(r, child_notify, nullptr, child_drop), "on_done")) return check;
  // A new runner works in the child, and drops its arg once.
  ++check;
  if (tether_runner_start(nullptr, child_fn, nullptr, child_drop, &fresh) != TETHER_OK ||
      tether_runner_join(fresh, INT64_C(10000000000)) != TETHER_OK || tether_runner_release(fresh) != TETHER_OK) {
    child_say("child: a runner made in the child did not run\n");
    return check;
  }
  ++check;
  if (g_child_fn_runs.load() != 1 || g_child_drops.load() != 1) {
    child_say("child: the child's runner ran or dropped its arg other than once\n");
    return check;
  }
  if (!expect_forked(tether_runner_cancel(r), "cancel")) return check;
  if (!expect_forked(tether_runner_release(r), "release")) return check;
  if (!expect_forked(tether_runner_release_nowait(r), "release_nowait")) return check;
  ++check;
  if (tether_runner_poll(tether_runner{0x123456789ULL}, &s) != TETHER_E_INVALID_HANDLE) {
    child_say("child: a forged id is not INVALID_HANDLE\n");
    return check;
  }
  if (!expect_forked(tether_error_release(parent_error), "error_release")) return check;
  ++check;
  if (e.id != 0) {
    child_say("child: an error handle was handed out\n");
    return check;
  }
  ++check;
  if (g_child_fn_runs.load() != 1 || g_child_drops.load() != 1) {
    child_say("child: a callback or an arg_drop of the parent's ran in the child\n");
    return check;
  }
  ++check;
  if (std::strcmp(tether_status_name(TETHER_E_FORKED), "TETHER_E_FORKED") != 0) {
    child_say("child: tether_status_name does not work after fork\n");
    return check;
  }
  return 0;
}

Gate *g_gated_entered = new Gate;
tether_status gated_target(tether_task *, void *arg) {
  g_gated_entered->set();
  static_cast<Gate *>(arg)->wait_for(std::chrono::seconds(20));
  return TETHER_OK;
}
std::atomic<int> g_parent_drops{0};
void parent_drop(void *) { g_parent_drops.fetch_add(1); }
tether_status failing_target(tether_task *t, void *) { return tether_task_fail(t, 1, "for fork"); }

int fork_mode(bool child_exit) {
  // An error handle taken before the fork.
  tether_runner failed{};
  if (tether_runner_start(nullptr, failing_target, nullptr, nullptr, &failed) != TETHER_OK) return fail("start failed");
  if (tether_runner_join_all(failed, INT64_C(20000000000)) != TETHER_OK) return fail("join failed");
  tether_error parent_error{};
  if (tether_runner_error(failed, &parent_error) != TETHER_OK || parent_error.id == 0) return fail("no error");

  Gate *gate = new Gate;
  tether_runner r{};
  if (tether_runner_start(nullptr, gated_target, gate, parent_drop, &r) != TETHER_OK) return fail("start failed");
  // Forked once the runner's thread runs its target: a thread still starting up may hold
  // a runtime lock without a fork handler (ASan's allocator) that the child would inherit
  // held. The library's own threads are past that point (ControlThread::start).
  if (!g_gated_entered->wait_for(std::chrono::seconds(20))) return fail("the gated target did not start");

  const pid_t pid = fork();
  if (pid < 0) return fail("fork failed");
  if (pid == 0) {
    alarm(20);  // a call that blocks in the child ends it by SIGALRM, which the parent sees
    const int code = run_child_checks(r, parent_error);
    if (child_exit) std::exit(code);
    _exit(code);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return fail("waitpid failed");
  int result = 0;
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "process_helper: the child died of signal %d\n", WTERMSIG(status));
    result = 4;
  } else if (WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "process_helper: the child's check %d failed\n", WEXITSTATUS(status));
    result = 5;
  }
  // The parent's runner did not notice anything.
  int32_t s = -1;
  if (tether_runner_poll(r, &s) != TETHER_OK || s != TETHER_RUNNING) {
    std::fprintf(stderr, "process_helper: parent runner state %d after the fork\n", s);
    result = result ? result : 6;
  }
  gate->set();
  if (tether_runner_join_all(r, INT64_C(20000000000)) != TETHER_OK) result = result ? result : 7;
  if (tether_runner_poll(r, &s) != TETHER_OK || s != TETHER_SUCCEEDED) result = result ? result : 8;
  if (tether_runner_release(r) != TETHER_OK) result = result ? result : 9;
  if (g_parent_drops.load() != 1) {
    std::fprintf(stderr, "process_helper: parent arg dropped %d times\n", g_parent_drops.load());
    result = result ? result : 10;
  }
  if (tether_error_code(parent_error) != TETHER_E_TASK_FAILED) result = result ? result : 11;
  if (tether_error_release(parent_error) != TETHER_OK) result = result ? result : 12;
  if (tether_runner_release(failed) != TETHER_OK) result = result ? result : 13;
  delete gate;
  return result;
}

// fork-in-callback: the parent's pid, the children forked, and the pipe a call queued
// behind a fork writes to when it runs in a child.
pid_t g_parent_pid = 0;
std::atomic<pid_t> g_child{0};
int g_witness_fd = -1;
std::atomic<int> g_witnessed{0};

void fork_here() {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(10);  // a child the library does not end lives on: SIGALRM, which the parent sees
    return;     // the callback returns in the child: the library must end it now
  }
  g_child.store(pid);
}
tether_status forking_method(tether_task *, void *, void *) {
  fork_here();
  return TETHER_OK;
}
void forking_drop(void *) { fork_here(); }
tether_status nothing(tether_task *, void *, void *) { return TETHER_OK; }
tether_status witness(tether_task *, void *, void *) {
  if (getpid() != g_parent_pid) {
    (void)!write(g_witness_fd, "W", 1);  // a call of the parent's ran in a child
  } else {
    g_witnessed.fetch_add(1);
  }
  return TETHER_OK;
}
tether_status no_state(tether_task *, void *, void **state) {
  *state = nullptr;
  return TETHER_OK;
}

// wait_child: the child forked by the last fork_here ended with exit code 0.
bool wait_child(const char *what) {
  const pid_t pid = g_child.exchange(0);
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) {
    std::fprintf(stderr, "process_helper: %s: no child to wait for\n", what);
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "process_helper: %s: the child ended with status %d\n", what, status);
    return false;
  }
  return true;
}

int fork_in_callback() {
  g_parent_pid = getpid();
  int fds[2];
  if (pipe(fds) != 0) return fail("pipe");
  g_witness_fd = fds[1];
  tether_actor a{};
  if (tether_actor_create(nullptr, no_state, nullptr, nullptr, nullptr, &a) != TETHER_OK) return fail("create");
  auto witnesses = [&] {
    for (int i = 0; i < 3; ++i) {
      if (tether_actor_call(a, nullptr, witness, nullptr, nullptr, nullptr) != TETHER_OK) return false;
    }
    return tether_actor_call_wait(a, nullptr, nothing, nullptr, nullptr, -1, nullptr, nullptr) == TETHER_OK;
  };
  int result = 0;
  // A fire-and-forget method forks (a run of fire-and-forget calls behind it).
  if (tether_actor_call(a, nullptr, forking_method, nullptr, nullptr, nullptr) != TETHER_OK || !witnesses()) {
    result = 2;
  } else if (!wait_child("fire-and-forget method")) {
    result = 3;
  }
  // An arg's drop forks, after its method ran.
  if (result == 0 && (tether_actor_call(a, nullptr, nothing, &g_witnessed, forking_drop, nullptr) != TETHER_OK ||
                      !witnesses())) {
    result = 4;
  } else if (result == 0 && !wait_child("arg drop")) {
    result = 5;
  }
  // A method called with a future forks.
  tether_future f{};
  if (result == 0 && (tether_actor_call(a, nullptr, forking_method, nullptr, nullptr, &f) != TETHER_OK ||
                      tether_future_wait(f, -1) != TETHER_OK || tether_future_release(f) != TETHER_OK || !witnesses())) {
    result = 6;
  } else if (result == 0 && !wait_child("method with a future")) {
    result = 7;
  }
  if (tether_actor_release(a) != TETHER_OK) result = result ? result : 8;
  close(fds[1]);
  char buf[16];
  const ssize_t n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  if (n != 0) {
    std::fprintf(stderr, "process_helper: %zd call(s) of the parent's ran in a child\n", n);
    result = result ? result : 9;
  }
  if (result == 0 && g_witnessed.load() != 9) {
    std::fprintf(stderr, "process_helper: the parent ran %d of its 9 calls\n", g_witnessed.load());
    result = 10;
  }
  return result;
}

// SchedAttr: the kernel's struct sched_attr, first version (48 bytes).
struct SchedAttr {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;  // runtime: a SCHED_OTHER thread's slice (Linux 6.12+)
};

// sched_attr_of: thread tid's (0: the caller's) attributes; false where the OS has none.
bool sched_attr_of(uint64_t tid, SchedAttr &attr) {
  attr = SchedAttr{};
#if defined(__linux__) && defined(SYS_sched_getattr)
  return syscall(SYS_sched_getattr, static_cast<pid_t>(tid), &attr, sizeof attr, 0) == 0;
#else
  (void)tid;
  return false;
#endif
}

// slice_of: thread tid's time slice in ns, 0 where the OS reports none.
uint64_t slice_of(uint64_t tid) {
  SchedAttr attr;
  return sched_attr_of(tid, attr) ? attr.runtime : 0;
}

// settable_slice: what a plain thread's slice reads after it asked for 300000 ns itself
// (another value: this system refuses or ignores the request, e.g. a seccomp filter).
uint64_t settable_slice() {
  uint64_t got = 0;
  std::thread probe([&] {
    SchedAttr attr;
    if (!sched_attr_of(0, attr)) return;
    attr.size = sizeof attr;
    attr.flags = 0;
    attr.runtime = 300000;
#if defined(__linux__) && defined(SYS_sched_setattr)
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return;
#endif
    got = slice_of(0);
  });
  probe.join();
  return got;
}

int time_slice() {
  const uint64_t own = slice_of(0);
  const uint64_t settable = settable_slice();
  tether_executor exec;
  if (tether_executor_create(nullptr, &exec) != TETHER_OK) return fail("tether_executor_create");
  tether_executor_stats es{};
  es.struct_size = sizeof es;
  // The thread reports its id once it runs: a call answered means it has started serving.
  tether_future f;
  if (tether_executor_submit(exec, [](tether_task *, void *) { return tether_status{TETHER_OK}; }, nullptr, nullptr,
                             &f) != TETHER_OK ||
      tether_future_wait(f, 10'000'000'000) != TETHER_OK || tether_future_release(f) != TETHER_OK ||
      tether_executor_get_stats(exec, &es) != TETHER_OK) {
    return fail("executor call");
  }
  tether_actor actor;
  if (tether_actor_create(nullptr, [](tether_task *, void *, void **state) {
        *state = nullptr;
        return tether_status{TETHER_OK};
      }, nullptr, nullptr, nullptr, &actor) != TETHER_OK) {
    return fail("tether_actor_create");
  }
  tether_actor_stats as{};
  as.struct_size = sizeof as;
  void *result = nullptr;
  if (tether_actor_call_wait(actor, nullptr, [](tether_task *, void *, void *) { return tether_status{TETHER_OK}; },
                             nullptr, nullptr, 10'000'000'000, &result, nullptr) != TETHER_OK ||
      tether_actor_get_stats(actor, &as) != TETHER_OK) {
    return fail("actor call");
  }
  tether_executor_options mo;
  tether_executor_options_init(&mo);
  mo.manual = 1;
  tether_executor manual;
  if (tether_executor_create(&mo, &manual) != TETHER_OK || tether_executor_run(manual, 0) != TETHER_OK) {
    return fail("manual executor");
  }
  std::printf("settable=%llu own=%llu executor=%llu actor=%llu own_after_manual=%llu\n",
              static_cast<unsigned long long>(settable), static_cast<unsigned long long>(own),
              static_cast<unsigned long long>(slice_of(es.os_thread_id)),
              static_cast<unsigned long long>(slice_of(as.os_thread_id)),
              static_cast<unsigned long long>(slice_of(0)));
  const bool released = tether_executor_release(manual) == TETHER_OK && tether_actor_release(actor) == TETHER_OK &&
                        tether_executor_release(exec) == TETHER_OK;
  return released ? 0 : fail("release");
}

#if defined(__linux__)
// The wake-preemption scenario (core/wake_preemption.h). Every wait is bounded by kBound
// (the process test's own bound kills a helper that hangs anyway).
constexpr auto kBound = std::chrono::seconds(10);

tether_status ok_method(tether_task *, void *, void *) { return tether_status{TETHER_OK}; }

// parked: thread tid sleeps (the state letter of /proc/self/task/TID/stat is S): an idle
// actor thread's one blocking point is its park, so it chose its policy.
bool parked(uint64_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S';
}

// policy_once_parked: thread tid's policy once it parks, -1 if it does not within kBound.
int policy_once_parked(uint64_t tid) {
  const auto end = std::chrono::steady_clock::now() + kBound;
  while (!parked(tid)) {
    if (std::chrono::steady_clock::now() > end) return -1;
    std::this_thread::yield();  // this CPU is the actor thread's too
  }
  SchedAttr attr;
  return sched_attr_of(tid, attr) ? static_cast<int>(attr.policy) : -1;
}

// An actor on its own thread, pinned to `cpu`, and its thread's id.
struct PinnedActor {
  tether_actor actor{};
  uint64_t tid = 0;
  bool live = false;          // actor made and not released
  std::atomic<int> done{0};  // a round's last call ran
  PinnedActor() = default;
  PinnedActor(const PinnedActor &) = delete;
  PinnedActor &operator=(const PinnedActor &) = delete;
  ~PinnedActor() {  // after a failure: its calls still queued run (they use done) first
    if (live) (void)tether_actor_release(actor);
  }
  bool release() {
    live = false;
    return tether_actor_release(actor) == TETHER_OK;
  }
  bool make(int cpu) {
    if (tether_actor_create(nullptr, [](tether_task *, void *, void **state) {
          *state = nullptr;
          return tether_status{TETHER_OK};
        }, nullptr, nullptr, nullptr, &actor) != TETHER_OK) {
      return false;
    }
    live = true;
    tether_actor_stats as{};
    as.struct_size = sizeof as;
    if (tether_actor_call_wait(actor, nullptr, ok_method, nullptr, nullptr, -1, nullptr, nullptr) != TETHER_OK ||
        tether_actor_get_stats(actor, &as) != TETHER_OK) {
      return false;
    }
    tid = as.os_thread_id;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(static_cast<pid_t>(tid), sizeof set, &set) == 0;
  }
  // stream: `rounds` of 256 fire-and-forget calls, each round waited for (without the
  // library: the last call's method wakes an atomic), until the thread parks under
  // `until` (-1: all rounds). Its policy then, -1 on a failure.
  int stream(int rounds, int until) {
    int policy = -1;
    for (int r = 0; r < rounds; ++r) {
      done.store(0);
      for (int i = 0; i < 255; ++i) {
        if (tether_actor_call(actor, nullptr, ok_method, nullptr, nullptr, nullptr) != TETHER_OK) return -1;
      }
      if (tether_actor_call(actor, nullptr, [](tether_task *, void *, void *arg) {
            auto *d = static_cast<std::atomic<int> *>(arg);
            d->store(1);
            d->notify_one();
            return tether_status{TETHER_OK};
          }, &done, nullptr, nullptr) != TETHER_OK) {
        return -1;
      }
      const auto end = std::chrono::steady_clock::now() + kBound;
      while (done.load() == 0) {
        if (std::chrono::steady_clock::now() > end) return -1;
        std::this_thread::yield();
      }
      policy = policy_once_parked(tid);
      if (policy == until) break;
    }
    return policy;
  }
  int waited_calls() {
    for (int i = 0; i < 3; ++i) {
      if (tether_actor_call_wait(actor, nullptr, ok_method, nullptr, nullptr, -1, nullptr, nullptr) != TETHER_OK) {
        return -1;
      }
    }
    return policy_once_parked(tid);
  }
  // futures_waited_at_once: calls with a future, each waited for at once, until the
  // thread parks under `until` (at most 50).
  int futures_waited_at_once(int until) {
    int policy = -1;
    for (int i = 0; i < 50 && policy != until; ++i) {
      tether_future f;
      if (tether_actor_call(actor, nullptr, ok_method, nullptr, nullptr, &f) != TETHER_OK) return -1;
      const bool answered = tether_future_wait(f, 10'000'000'000) == TETHER_OK;
      if (tether_future_release(f) != TETHER_OK || !answered) return -1;
      policy = policy_once_parked(tid);
    }
    return policy;
  }
};

int wake_preemption() {
  const int cpu = sched_getcpu();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (cpu < 0 || sched_setaffinity(0, sizeof set, &set) != 0) {
    std::printf("unpinnable\n");
    return 0;
  }
  PinnedActor a;
  if (!a.make(cpu)) return fail("actor a");
  const int stream = a.stream(100, SCHED_BATCH);
  const int waited = a.waited_calls();
  const int stream_again = a.stream(100, SCHED_BATCH);
  const int future = a.futures_waited_at_once(SCHED_OTHER);

  PinnedActor idle;  // its user makes its thread SCHED_IDLE
  if (!idle.make(cpu)) return fail("actor idle");
  if (tether_actor_call_wait(idle.actor, nullptr, [](tether_task *, void *, void *) {
        sched_param none{};
        const int rc = sched_setscheduler(0, SCHED_IDLE, &none);
        return tether_status{rc == 0 ? TETHER_OK : TETHER_E_TASK_FAILED};
      }, nullptr, nullptr, -1, nullptr, nullptr) != TETHER_OK) {
    return fail("SCHED_IDLE");
  }
  (void)idle.stream(20, -1);
  const int user_idle = idle.waited_calls();

  sched_param none{};  // a thread made while its maker is SCHED_BATCH inherits it
  if (sched_setscheduler(0, SCHED_BATCH, &none) != 0) return fail("SCHED_BATCH");
  PinnedActor batch;
  const bool made = batch.make(cpu);
  if (sched_setscheduler(0, SCHED_OTHER, &none) != 0 || !made) return fail("actor batch");
  (void)batch.stream(20, -1);
  const int inherited_batch = batch.waited_calls();

  std::printf("stream=%d waited=%d stream_again=%d future=%d user_idle=%d inherited_batch=%d\n", stream, waited,
              stream_again, future, user_idle, inherited_batch);
  const bool released = a.release() && idle.release() && batch.release();
  return released ? 0 : fail("release");
}
#else
int wake_preemption() {
  std::printf("unpinnable\n");
  return 0;
}
#endif

}  // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::string(argv[1]) == "exit-with") return std::atoi(argv[2]);
  if (argc != 2) return fail("usage: tether_process_helper MODE");
  const std::string mode = argv[1];
  if (mode == "exit-blocked" || mode == "exit-blocked-nowait" || mode == "exit-join-pending") {
    return exit_blocked(mode);
  }
  if (mode == "fork") return fork_mode(false);
  if (mode == "fork-exit") return fork_mode(true);
  if (mode == "fork-in-callback") return fork_in_callback();
  if (mode == "time-slice") return time_slice();
  if (mode == "wake-preemption") return wake_preemption();
  return fail("unknown mode");
}
