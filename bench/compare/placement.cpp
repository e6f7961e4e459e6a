#include "placement.h"

#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

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

}  // namespace compare
