// block_slab_test.cpp: BlockSlab (src/core/block_slab.h) gives aligned blocks that never
// overlap, takes freed ones back for the next objects, and sends what does not fit it to
// the heap. A slab of its own (its own block size), so other tests' objects never mix in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/block_slab.h"
#include "core/pool_bypass.h"
#include "platform/platform.h"

namespace core_test {
namespace {

constexpr size_t kBlock = 3 * 64;
using TestSlab = tether::BlockSlab<kBlock, 64, 8>;

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(BlockSlab, BlocksAreAlignedAndApartAcrossChunks) {
  std::vector<void*> blocks;
  for (int i = 0; i < 50; ++i) {  // more than six chunks of 8
    void* p = TestSlab::allocate(kBlock);
    EXPECT_EQ(0u, address(p) % 64);
    std::memset(p, 0xab, kBlock);  // all of it is ours (ASan and valgrind watch this)
    blocks.push_back(p);
  }
  std::vector<uintptr_t> sorted;
  for (void* p : blocks) sorted.push_back(address(p));
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) EXPECT_GE(sorted[i] - sorted[i - 1], kBlock) << "blocks overlap";
  for (void* p : blocks) TestSlab::free(p, kBlock);
}

TEST(BlockSlab, AFreedBlockServesTheNextObject) {
  if (!tether::pool_detail::kPooled) GTEST_SKIP() << "under AddressSanitizer every block is the heap's";
  void* a = TestSlab::allocate(kBlock);
  TestSlab::free(a, kBlock);
  void* b = TestSlab::allocate(kBlock);
  EXPECT_EQ(a, b);
  TestSlab::free(b, kBlock);
}

// free_linked: a list of blocks (a magazine's, linked through their first word) goes back
// at once; each serves a later object, none twice.
TEST(BlockSlab, AFreedListServesTheNextObjectsEachOnce) {
  constexpr int kBlocks = 20;  // more than two chunks of 8
  tether::pool_detail::FreeBlock* list = nullptr;
  std::vector<uintptr_t> freed;
  for (int i = 0; i < kBlocks; ++i) {
    auto* b = static_cast<tether::pool_detail::FreeBlock*>(TestSlab::allocate(kBlock));
    b->next = list;
    list = b;
    freed.push_back(address(b));
  }
  TestSlab::free_linked(list);
  TestSlab::free_linked(nullptr);  // nothing to free: nothing happens
  if (!tether::pool_detail::kPooled) return;  // under AddressSanitizer every block was the heap's
  std::vector<void*> again;
  for (int i = 0; i < kBlocks; ++i) again.push_back(TestSlab::allocate(kBlock));
  std::vector<uintptr_t> sorted;
  for (void* p : again) sorted.push_back(address(p));
  std::sort(sorted.begin(), sorted.end());
  std::sort(freed.begin(), freed.end());
  EXPECT_EQ(freed, sorted) << "the freed list's blocks, each once, serve the next objects";
  for (void* p : again) TestSlab::free(p, kBlock);
}

TEST(BlockSlab, ALargerRequestGoesToTheHeapAligned) {
  void* p = TestSlab::allocate(kBlock + 1);
  EXPECT_EQ(0u, address(p) % 64);
  std::memset(p, 0xcd, kBlock + 1);
  TestSlab::free(p, kBlock + 1);
}

TEST(BlockSlab, ThreadsMakingAndFreeingAtOnceNeverShareABlock) {
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      std::vector<unsigned char*> mine;
      for (int r = 0; r < kRounds; ++r) {
        auto* p = static_cast<unsigned char*>(TestSlab::allocate(kBlock));
        std::memset(p, t, kBlock);
        mine.push_back(p);
        if (r % 3 == 2) {  // free some while others allocate
          for (unsigned char* q : mine) {
            if (std::count(q, q + kBlock, static_cast<unsigned char>(t)) != static_cast<long>(kBlock)) ++failures[t];
            TestSlab::free(q, kBlock);
          }
          mine.clear();
        }
      }
      for (unsigned char* q : mine) TestSlab::free(q, kBlock);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(0, failures[t]) << "thread " << t << "'s block was written by another";
}

// Once a slab has carved half a huge page's worth of blocks, its next chunks are huge-page
// regions (when the OS gives them): the blocks there are aligned, apart and all ours too,
// and freed ones serve later objects as any others.
TEST(BlockSlab, OnceItHasGrownItsChunksAreHugePageRegions) {
  constexpr size_t kBig = 4 * 64;
  using GrowingSlab = tether::BlockSlab<kBig, 64, 16>;
  const size_t count = (tether::platform::kHugeRegionBytes / 2 + 2 * tether::platform::kHugeRegionBytes) / kBig;
  std::vector<void*> blocks;
  blocks.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    void* p = GrowingSlab::allocate(kBig);
    ASSERT_EQ(0u, address(p) % 64);
    std::memset(p, 0x5a, kBig);
    blocks.push_back(p);
  }
  std::vector<uintptr_t> sorted;
  for (void* p : blocks) sorted.push_back(address(p));
  std::sort(sorted.begin(), sorted.end());
  size_t overlaps = 0;
  for (size_t i = 1; i < sorted.size(); ++i) overlaps += sorted[i] - sorted[i - 1] < kBig;
  EXPECT_EQ(0u, overlaps);
  if (tether::pool_detail::kPooled) {
    void* probe = tether::platform::map_huge_region();  // what the OS gives (never returned: 2 MiB)
    if (probe != nullptr) {
      EXPECT_GE(GrowingSlab::huge_chunks(), 1u) << "the slab grew past the threshold on ordinary chunks";
      EXPECT_EQ(0u, address(probe) % tether::platform::kHugeRegionBytes);
    }
  }
  for (void* p : blocks) GrowingSlab::free(p, kBig);
  void* again = GrowingSlab::allocate(kBig);
  if (tether::pool_detail::kPooled) {  // under AddressSanitizer every block is the heap's
    EXPECT_NE(sorted.end(), std::find(sorted.begin(), sorted.end(), address(again))) << "a freed block serves it";
  }
  GrowingSlab::free(again, kBig);
}

}  // namespace
}  // namespace core_test
