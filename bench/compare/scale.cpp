// scale.cpp: the rows about many actors, tether next to CAF's event-based actors.
//   100,000 actors on 2 executors: resident memory per actor (the growth of the process's
//     RSS from before the first is made to after the last is made, and to after each has
//     answered once: the second also holds what 100,000 calls in flight at once left
//     behind in the allocator), the time to
//     create each, and the time per call when one call with a future goes to each.
//   1,000 actors each parking and waking, each on a thread of its own: a caller calls
//     them round robin, so each has parked (its spin window passed) before its next call.
//     Once without and once with a fire-and-forget call to each first: that call gives
//     the actor's lane a ring, leased by the caller's sender while the caller keeps it
//     (its 4 most recent actors), and a lane parks with a heavy fence (a membarrier
//     system call, which interrupts every running thread of the process) while one of its
//     rings is leased. The difference is what rings cost a lane: those fences, and the
//     sources a consumer with rings visits.
//   Idle: the CPU of the whole process while it does nothing, once the spin windows are
//     over: one idle actor, then 1,000.
#include "scale.h"

#include <tether/tether.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../check.h"
#include "measure.h"

#ifdef COMPARE_HAVE_CAF
#include <caf/all.hpp>
#endif

namespace compare {
namespace {

using tether_bench::Check;

constexpr int kManyActors = 100'000;
constexpr int kParkingActors = 1'000;
constexpr int kParkingRounds = 3;

double rss_bytes() {
  long pages_total = 0, pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = 0;
  std::fclose(f);
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

void sleep_ms(int ms) {
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1'000'000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0) {
  }
}

tether_status NoState(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}
tether_status AddOne(tether_task* t, void*, void* arg) {
  return tether_task_set_result(t, reinterpret_cast<void*>(reinterpret_cast<intptr_t>(arg) + 1), nullptr);
}
tether_status Nothing(tether_task*, void*, void*) { return TETHER_OK; }

tether_actor make_actor(tether_executor on) {
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.executor = on;
  tether_actor a;
  Check(tether_actor_create(&o, NoState, nullptr, nullptr, nullptr, &a), TETHER_OK, "tether_actor_create");
  return a;
}

// call_each: one call with a future to every actor, all in flight, then every answer.
void call_each(const std::vector<tether_actor>& actors) {
  std::vector<tether_future> fs(actors.size());
  for (size_t i = 0; i < actors.size(); ++i) {
    Check(tether_actor_call(actors[i], nullptr, AddOne, reinterpret_cast<void*>(static_cast<intptr_t>(i)), nullptr,
                            &fs[i]),
          TETHER_OK, "tether_actor_call");
  }
  for (size_t i = 0; i < fs.size(); ++i) {
    Check(tether_future_wait(fs[i], -1), TETHER_OK, "tether_future_wait");
    void* r = nullptr;
    Check(tether_future_take_result(fs[i], &r), TETHER_OK, "tether_future_take_result");
    if (reinterpret_cast<intptr_t>(r) != static_cast<intptr_t>(i) + 1) std::abort();
    Check(tether_future_release(fs[i]), TETHER_OK, "tether_future_release");
  }
}

struct ManyResult {
  double rss_made = 0, rss_per_actor = 0, create_ns = 0, call_ns = 0;
};

ManyResult tether_many() {
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  tether_executor e[2];
  for (auto& x : e) Check(tether_executor_create(&eo, &x), TETHER_OK, "tether_executor_create");
  std::vector<tether_actor> actors;
  actors.reserve(kManyActors);
  const double rss0 = rss_bytes();
  const int64_t t0 = now_ns();
  for (int i = 0; i < kManyActors; ++i) actors.push_back(make_actor(e[i % 2]));
  const int64_t t1 = now_ns();
  const double rss_made = (rss_bytes() - rss0) / kManyActors;
  call_each(actors);
  const int64_t t2 = now_ns();
  ManyResult r{rss_made, (rss_bytes() - rss0) / kManyActors, static_cast<double>(t1 - t0) / kManyActors,
               static_cast<double>(t2 - t1) / kManyActors};
  for (tether_actor a : actors) Check(tether_actor_release(a), TETHER_OK, "tether_actor_release");
  for (auto& x : e) Check(tether_executor_release(x), TETHER_OK, "tether_executor_release");
  return r;
}

#ifdef COMPARE_HAVE_CAF
caf::behavior AddOneBehavior() {
  return {[](int64_t x) { return x + 1; }};
}

ManyResult caf_many() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system system{cfg};
  caf::scoped_actor self{system};
  std::vector<caf::actor> actors;
  actors.reserve(kManyActors);
  const double rss0 = rss_bytes();
  const int64_t t0 = now_ns();
  for (int i = 0; i < kManyActors; ++i) actors.push_back(system.spawn(AddOneBehavior));
  const int64_t t1 = now_ns();
  const double rss_made = (rss_bytes() - rss0) / kManyActors;
  for (int i = 0; i < kManyActors; ++i) self->send(actors[static_cast<size_t>(i)], int64_t{i});
  int64_t sum = 0;
  for (int i = 0; i < kManyActors; ++i) self->receive([&](int64_t y) { sum += y; });
  const int64_t t2 = now_ns();
  if (sum != static_cast<int64_t>(kManyActors) * (kManyActors + 1) / 2) std::abort();
  ManyResult r{rss_made, (rss_bytes() - rss0) / kManyActors, static_cast<double>(t1 - t0) / kManyActors,
               static_cast<double>(t2 - t1) / kManyActors};
  for (auto& a : actors) self->send_exit(a, caf::exit_reason::user_shutdown);
  return r;
}
#endif

struct ParkResult {
  double call_ns = 0, caller_cpu = 0, other_cpu = 0, idle_cpu = 0;
};

// parking: kParkingActors actors, each on a thread of its own, called round robin.
ParkResult parking(bool with_rings) {
  std::vector<tether_actor> actors;
  for (int i = 0; i < kParkingActors; ++i) actors.push_back(make_actor(tether_executor{0}));
  call_each(actors);  // every constructor has run
  if (with_rings) {
    for (tether_actor a : actors) {
      Check(tether_actor_call(a, nullptr, Nothing, nullptr, nullptr, nullptr), TETHER_OK, "tether_actor_call");
    }
  }
  sleep_ms(5);  // every actor has parked
  const int64_t wall0 = now_ns(), mine0 = thread_cpu_ns(), all0 = process_cpu_ns();
  for (int round = 0; round < kParkingRounds; ++round) {
    for (tether_actor a : actors) {
      tether_future f;
      Check(tether_actor_call(a, nullptr, AddOne, nullptr, nullptr, &f), TETHER_OK, "tether_actor_call");
      Check(tether_future_wait(f, -1), TETHER_OK, "tether_future_wait");
      Check(tether_future_release(f), TETHER_OK, "tether_future_release");
    }
  }
  const double wall = static_cast<double>(now_ns() - wall0);
  const double mine = static_cast<double>(thread_cpu_ns() - mine0);
  const double all = static_cast<double>(process_cpu_ns() - all0);
  ParkResult r{wall / (kParkingRounds * kParkingActors), mine / wall, (all - mine) / wall, 0};
  sleep_ms(50);  // past every spin window
  const int64_t idle0 = process_cpu_ns(), idle_wall0 = now_ns();
  sleep_ms(200);
  r.idle_cpu = static_cast<double>(process_cpu_ns() - idle0) / static_cast<double>(now_ns() - idle_wall0);
  for (tether_actor a : actors) Check(tether_actor_release(a), TETHER_OK, "tether_actor_release");
  return r;
}

double one_idle_actor_cpu() {
  tether_actor a = make_actor(tether_executor{0});
  call_each({a});
  sleep_ms(50);
  const int64_t cpu0 = process_cpu_ns(), wall0 = now_ns();
  sleep_ms(200);
  const double cpu = static_cast<double>(process_cpu_ns() - cpu0) / static_cast<double>(now_ns() - wall0);
  Check(tether_actor_release(a), TETHER_OK, "tether_actor_release");
  return cpu;
}

// in_fresh_process: runs `tether_compare --many-child WHO` (many_child below) and reads its
// result: each 100,000-actor sample in a process of its own, so the RSS it grows is its
// own and not what the heap kept from the samples before it (a CAF sample after tether's
// reused tether's freed pages and showed ~130 B an actor).
ManyResult in_fresh_process(const char* who) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) std::abort();
  exe[n] = '\0';
  const std::string command = std::string("'") + exe + "' --many-child " + who;
  FILE* child = ::popen(command.c_str(), "r");
  if (child == nullptr) std::abort();
  ManyResult r;
  const int got = std::fscanf(child, "%lf %lf %lf %lf", &r.rss_made, &r.rss_per_actor, &r.create_ns, &r.call_ns);
  if (::pclose(child) != 0 || got != 4) {
    std::fprintf(stderr, "compare: the %s sample's process failed\n", who);
    std::exit(1);
  }
  return r;
}

template <class F>
std::vector<decltype(std::declval<F>()())> repeat(int reps, F f) {
  std::vector<decltype(f())> out;
  for (int i = 0; i < reps; ++i) out.push_back(f());
  return out;
}

template <class T>
double med(const std::vector<T>& v, double T::*field) {
  std::vector<double> x;
  for (const T& r : v) x.push_back(r.*field);
  return median(x);
}

template <class T>
double most(const std::vector<T>& v, double T::*field) {
  double m = 0;
  for (const T& r : v) m = std::max(m, r.*field);
  return m;
}

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string many_row(const char* who, const std::vector<ManyResult>& v) {
  return std::string("| ") + who + " | " + fmt("%.0f B", most(v, &ManyResult::rss_made)) + " | " +
         fmt("%.0f B", most(v, &ManyResult::rss_per_actor)) + " | " +
         fmt("%.2f us", med(v, &ManyResult::create_ns) / 1000) + " | " + fmt("%.2f us", med(v, &ManyResult::call_ns) / 1000) +
         " |\n";
}

}  // namespace

ScaleReport scale_report(int reps) {
  ScaleReport out;
  std::string& md = out.markdown;
  md += "### 100,000 actors on 2 executor threads (median of " + std::to_string(reps) +
        ", each sample in a new process; RSS: the largest growth of the " + std::to_string(reps) + ")\n\n";
  md += "| | RSS per actor, made | RSS per actor, after one call to each | create, per actor | one call to each, "
        "per call |\n|---|---|---|---|---|\n";
  const auto t = repeat(reps, [] { return in_fresh_process("tether"); });
  md += many_row("tether actors on 2 shared executors", t);
  out.tether_rss_made = most(t, &ManyResult::rss_made);
  out.tether_rss = most(t, &ManyResult::rss_per_actor);
  out.tether_create_ns = med(t, &ManyResult::create_ns);
  out.tether_call_ns = med(t, &ManyResult::call_ns);
#ifdef COMPARE_HAVE_CAF
  md += many_row("CAF event-based actors, scheduler of 2 threads", repeat(reps, [] { return in_fresh_process("caf"); }));
#endif
  md += "\n### 1,000 actors, each on its own thread, parking and waking (median of " + std::to_string(reps) + ")\n\n";
  md += "| | per call (each actor parked) | caller CPU/s | other CPU/s | whole process idle, after |\n";
  md += "|---|---|---|---|---|\n";
  for (bool rings : {false, true}) {
    const auto v = repeat(reps, [rings] { return parking(rings); });
    md += std::string("| ") + (rings ? "with a ring each (leased by nobody but the caller's last 4)" : "mailbox only (no fence)") +
          " | " + fmt("%.2f us", med(v, &ParkResult::call_ns) / 1000) + " | " + fmt("%.2f", med(v, &ParkResult::caller_cpu)) +
          " | " + fmt("%.2f", med(v, &ParkResult::other_cpu)) + " | " + fmt("%.2f %% of a CPU", med(v, &ParkResult::idle_cpu) * 100) +
          " |\n";
    (rings ? out.park_ring_ns : out.park_plain_ns) = med(v, &ParkResult::call_ns);
    out.idle_1000_cpu = std::max(out.idle_1000_cpu, med(v, &ParkResult::idle_cpu));
  }
  std::vector<double> idle;
  for (int i = 0; i < reps; ++i) idle.push_back(one_idle_actor_cpu());
  out.idle_one_cpu = median(idle);
  md += "\nOne idle actor on its own executor, after its spin window: " + fmt("%.3f %% of a CPU", out.idle_one_cpu * 100) +
        " (the whole process).\n";
  return out;
}

int many_child(const std::string& who) {
  ManyResult r;
  if (who == "tether") {
    r = tether_many();
#ifdef COMPARE_HAVE_CAF
  } else if (who == "caf") {
    r = caf_many();
#endif
  } else {
    std::fprintf(stderr, "compare: --many-child %s: unknown\n", who.c_str());
    return 2;
  }
  std::printf("%.1f %.1f %.1f %.1f\n", r.rss_made, r.rss_per_actor, r.create_ns, r.call_ns);
  return 0;
}

}  // namespace compare
