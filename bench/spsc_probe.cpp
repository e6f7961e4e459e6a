// spsc_probe.cpp — the yardstick of this machine's cross-thread state: two threads, a
// ring of 32-byte items, no atomic read-modify-write at all (the producer publishes with
// a release store, the consumer reads in batches). Prints items per second. On a VM whose
// vCPUs the host moves around, it tells a fast state (a cache line moves in nanoseconds)
// from a slow one, and so which benchmark figures may be compared (bench/README.md).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace {

struct alignas(32) Item {
  void (*fn)(int64_t&);
  void* a;
  void* b;
  uint64_t seq;
};

constexpr size_t kSize = 4096;  // items, a power of two
constexpr uint64_t kItems = 20'000'000;

struct Ring {
  alignas(64) std::atomic<uint64_t> tail{0};  // written by the producer
  alignas(64) std::atomic<uint64_t> head{0};  // written by the consumer
  alignas(64) Item items[kSize];
};

void increment(int64_t& n) { ++n; }

}  // namespace

int main() {
  static Ring ring;
  int64_t count = 0;  // the consumer's
  const auto start = std::chrono::steady_clock::now();
  std::thread consumer([&] {
    uint64_t h = 0;
    while (h < kItems) {
      const uint64_t t = ring.tail.load(std::memory_order_acquire);
      if (t == h) continue;
      for (; h < t; ++h) ring.items[h & (kSize - 1)].fn(count);
      ring.head.store(h, std::memory_order_release);
    }
  });
  uint64_t head_seen = 0;
  for (uint64_t i = 0; i < kItems; ++i) {
    while (i - head_seen >= kSize) head_seen = ring.head.load(std::memory_order_acquire);
    Item& it = ring.items[i & (kSize - 1)];
    it = Item{&increment, nullptr, &it, i};
    ring.tail.store(i + 1, std::memory_order_release);
  }
  consumer.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("spsc %.1f M items/s (%.2f ns an item)\n", static_cast<double>(kItems) / s / 1e6,
              s * 1e9 / static_cast<double>(kItems));
  return count == static_cast<int64_t>(kItems) ? 0 : 1;
}
