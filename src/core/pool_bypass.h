// kPooled: whether the library's pools keep freed blocks for reuse. Not under
// AddressSanitizer: there every block is a heap allocation of its own, so a use after
// free stays detectable. Read by every pool (magazine_pool.h, block_slab.h).
// FreeBlock: a free block of any pool, linked through its first word: one type for a
// magazine's list and a slab's free list, so a list passes from one to the other as it is.
#pragma once

namespace tether::pool_detail {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kPooled = false;
#else
inline constexpr bool kPooled = true;
#endif
#else
inline constexpr bool kPooled = true;
#endif

struct FreeBlock {
  FreeBlock* next;
};

}  // namespace tether::pool_detail
