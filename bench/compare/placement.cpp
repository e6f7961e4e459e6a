#include "placement.h"

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace compare {
namespace {

struct Cpus {
  cpu_set_t all{};
  int first = -1;
  int second = -1;
  int count = 0;
};

const Cpus& cpus() {
  static const Cpus c = [] {
    Cpus c;
    if (sched_getaffinity(0, sizeof c.all, &c.all) != 0) std::abort();
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &c.all)) continue;
      if (c.count == 0) c.first = cpu;
      if (c.count == 1) c.second = cpu;
      ++c.count;
    }
    return c;
  }();
  return c;
}

cpu_set_t one(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return s;
}

// The placement being measured; written by the harness thread between samples, read by
// peer threads that pin themselves (atomics: they run concurrently with the next write
// only after a peer outlived its sample, which the harness never lets happen).
std::atomic<int> g_placement{static_cast<int>(Placement::kUnpinned)};
std::atomic<unsigned> g_generation{1};

void set_self(const cpu_set_t& mask) {
  if (pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) != 0) {
    std::fprintf(stderr, "compare: cannot set a thread's CPU affinity\n");
    std::abort();
  }
}

void remember(Placement p) {
  if (g_placement.exchange(static_cast<int>(p), std::memory_order_acq_rel) != static_cast<int>(p)) {
    g_generation.fetch_add(1, std::memory_order_acq_rel);
  }
}

}  // namespace

const char* placement_name(Placement p) {
  switch (p) {
    case Placement::kDifferentCpus: return "different CPUs";
    case Placement::kSameCpu: return "same CPU";
    case Placement::kUnpinned: return "unpinned";
  }
  return "?";
}

int usable_cpus() { return cpus().count; }

cpu_set_t worker_mask() {
  switch (static_cast<Placement>(g_placement.load(std::memory_order_acquire))) {
    case Placement::kDifferentCpus: return one(cpus().second);
    case Placement::kSameCpu: return one(cpus().first);
    case Placement::kUnpinned: break;
  }
  return cpus().all;
}

void place_for_build(Placement p) {
  remember(p);
  set_self(worker_mask());
}

void place_caller(Placement p) {
  remember(p);
  set_self(p == Placement::kUnpinned ? cpus().all : one(cpus().first));
}

void pin_self_to_worker() { set_self(worker_mask()); }

bool workers_apart() {
  return static_cast<Placement>(g_placement.load(std::memory_order_acquire)) == Placement::kDifferentCpus;
}

unsigned placement_generation() { return g_generation.load(std::memory_order_acquire); }

ThreadTimes thread_times() {
  ThreadTimes t;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return t;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    long long ns = 0;
    if (f >> ns) t.on_cpu_ns[std::strtol(e->d_name, nullptr, 10)] = ns;
  }
  closedir(d);
  return t;
}

namespace {

// last_cpu: field 39 of /proc/self/task/TID/stat (after the parenthesised name), or -1.
int last_cpu(long tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));  // from field 3, the state
  std::string field;
  for (int i = 3; i <= 39; ++i) {
    if (!(fields >> field)) return -1;
  }
  return std::atoi(field.c_str());
}

}  // namespace

int ran_on_one_cpu(const ThreadTimes& before) {
  const long me = static_cast<long>(gettid());
  const int my_cpu = last_cpu(me);
  if (my_cpu < 0) return -1;
  int others = 0;
  for (const auto& [tid, ns] : thread_times().on_cpu_ns) {
    auto was = before.on_cpu_ns.find(tid);
    if (tid == me || (was != before.on_cpu_ns.end() && was->second == ns)) continue;  // the caller, or idle
    const int cpu = last_cpu(tid);
    if (cpu < 0) continue;  // ended meanwhile
    if (cpu != my_cpu) return 0;
    ++others;
  }
  return others > 0 ? 1 : -1;
}

}  // namespace compare
