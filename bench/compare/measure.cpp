#include "measure.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace compare {
namespace {

constexpr int64_t kFireBatch = 1 << 16;  // increments per fire()

int64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void wrong(const PeerKind& kind, const char* what) {
  std::fprintf(stderr, "compare: %s: %s\n", kind.name.c_str(), what);
  std::abort();
}

void sleep_1ms() {
  timespec ts{0, 1'000'000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0) {
  }
}

// run: the workload's loop; returns the operations done and the nanoseconds they took.
struct Run {
  int64_t ops = 0;
  int64_t ns = 0;
};

Run run(const PeerKind& kind, Peer& peer, Workload w, int sample_ms, int idle_calls, int64_t& fired) {
  const int64_t budget = static_cast<int64_t>(sample_ms) * 1'000'000;
  Run r;
  int64_t x = 1;
  const int64_t t0 = now_ns();
  switch (w) {
    case kRoundTrip:
      while (now_ns() - t0 < budget) {
        for (int i = 0; i < 16; ++i, ++x) {
          if (peer.call(x) != x + 1) wrong(kind, "wrong answer");
        }
        r.ops += 16;
      }
      r.ns = now_ns() - t0;
      break;
    case kAfterIdle:
      for (int i = 0; i < idle_calls; ++i, ++x) {
        sleep_1ms();
        const int64_t a = now_ns();
        if (peer.call(x) != x + 1) wrong(kind, "wrong answer");
        r.ns += now_ns() - a;
        ++r.ops;
      }
      break;
    case kBurst: {
      std::vector<int64_t> xs(kBurstSize);
      do {
        for (int i = 0; i < kBurstSize; ++i) xs[static_cast<size_t>(i)] = x + i;
        peer.burst(xs.data(), kBurstSize);
        for (int i = 0; i < kBurstSize; ++i) {
          if (xs[static_cast<size_t>(i)] != x + i + 1) wrong(kind, "wrong answer in a burst");
        }
        x += kBurstSize;
        r.ops += kBurstSize;
      } while (now_ns() - t0 < budget);
      r.ns = now_ns() - t0;
      break;
    }
    case kFire:
      do {
        fired += kFireBatch;
        if (peer.fire(kFireBatch) != fired) wrong(kind, "an increment was lost");
        r.ops += kFireBatch;
      } while (now_ns() - t0 < budget);
      r.ns = now_ns() - t0;
      break;
  }
  return r;
}

}  // namespace

int64_t now_ns() { return clock_ns(CLOCK_MONOTONIC); }
int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
int64_t process_cpu_ns() { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

Sample measure(const PeerKind& kind, Workload w, Placement p, int sample_ms, int idle_calls) {
  place_for_build(p);
  std::unique_ptr<Peer> peer = kind.make();
  place_caller(p);
  int64_t fired = 0;
  // Warm-up: threads started, caches and pools filled, one of each operation.
  (void)run(kind, *peer, w == kAfterIdle ? kRoundTrip : w, 2, 1, fired);
  const ThreadTimes threads = p == Placement::kUnpinned ? thread_times() : ThreadTimes{};
  const int64_t wall0 = now_ns(), mine0 = thread_cpu_ns(), all0 = process_cpu_ns();
  const Run r = run(kind, *peer, w, sample_ms, idle_calls, fired);
  const double wall = static_cast<double>(now_ns() - wall0);
  const double mine = static_cast<double>(thread_cpu_ns() - mine0);
  const double all = static_cast<double>(process_cpu_ns() - all0);
  Sample s;
  if (p == Placement::kUnpinned) s.one_cpu = ran_on_one_cpu(threads);  // before the peer's threads end
  peer.reset();
  s.ns_per_op = static_cast<double>(r.ns) / static_cast<double>(r.ops);
  s.caller_cpu = mine / wall;
  s.other_cpu = std::max(0.0, all - mine) / wall;
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace compare
