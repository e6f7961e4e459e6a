// Source marks: how a lane with several queues (sources) keeps calls in the order the
// program made them. A lane's sources are a few rings, each written by one producer
// thread (call_ring.h), and the mailbox shared by everyone else (mailbox.h). Each source
// counts the entries it has published. A producer about to append reads every other
// source's count: those are the calls that happened before its own, and its entry carries
// them as marks. Only the rings made so far are read (Inbox::push_fast says why that is
// enough); a ring not made yet has published nothing, and its mark stays 0. The consumer runs an entry only once it has consumed every other source
// up to its marks, so a call published before another producer's call started runs first,
// whichever sources they came through; calls that raced each other may run in either
// order. The marks are always reachable: each one counts entries already published.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tether {

constexpr size_t kLaneRings = 4;                 // rings per lane: producers that lease one
constexpr size_t kLaneSources = kLaneRings + 1;  // the rings, then the mailbox
constexpr size_t kMailboxSource = kLaneRings;

// SourceMarks: a published count per source, low 32 bits, compared with wraparound (no
// source ever holds 2^31 unconsumed entries).
using SourceMarks = std::array<uint32_t, kLaneSources>;

// mark_unreached: a source's consumed count is short of its mark (marks wrap at 2^32).
[[nodiscard]] inline bool mark_unreached(uint64_t consumed, uint32_t mark) noexcept {
  return static_cast<int32_t>(static_cast<uint32_t>(consumed) - mark) < 0;
}

// first_unreached: a source s other than `self` whose consumed count is short of
// marks[s], or kLaneSources when every mark is reached.
[[nodiscard]] inline size_t first_unreached(const SourceMarks& marks, const uint64_t* consumed, size_t self) noexcept {
  for (size_t s = 0; s < kLaneSources; ++s) {
    if (s != self && mark_unreached(consumed[s], marks[s])) return s;
  }
  return kLaneSources;
}

}  // namespace tether
