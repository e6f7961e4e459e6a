// Mailbox: the queue in front of a lane's threads. The queue itself takes no lock: a push
// is one atomic exchange and one store (Dmitry Vyukov's intrusive multi-producer queue). The
// consumer side is serialised by a token held only while a node is unlinked or while a
// canceller walks the queue — never while user code runs — so several threads can
// consume (a group of N threads) and a canceller can reach queued nodes while the lane's
// thread is blocked in a method forever.
//
// Thread safety: push() from any thread. pop(), for_each_queued() need the token
// (ConsumerToken). Memory ordering: push publishes a node with a release store of its
// predecessor's next; the consumer reads next with acquire. The token's acquire/release
// orders everything consumers and cancellers do to nodes still queued. (A lane with rings
// serialises its pushes under its own push_mutex_ to keep the ordering marks: inbox.h.)
#pragma once

#include <atomic>

#include "core/chaos.h"
#include "core/cpu_relax.h"
#include "core/source_marks.h"

namespace tether {

struct MailboxNode {
  std::atomic<MailboxNode*> next{nullptr};
  SourceMarks marks{};  // in a lane with rings: the rings' counts at push (source_marks.h)
};

class Mailbox {
 public:
  Mailbox() noexcept : tail_(&stub_), head_(&stub_) {}
  static_assert(sizeof(std::atomic<MailboxNode*>) + sizeof(MailboxNode) <= 64, "the stub fits tail_'s line");

  // maybe_nonempty: something is queued or being pushed. Safe without the token (it
  // compares pointers, never follows them); seq_cst on tail_ so a consumer about to park
  // and a producer that just pushed cannot both miss each other (the wait protocols of
  // pinned_lane.h and shared_lane.h).
  [[nodiscard]] bool maybe_nonempty() const noexcept {
    // Empty is head_ == tail_ == &stub_; a single queued node can be both head_ and tail_.
    const MailboxNode* tail = tail_.load(std::memory_order_seq_cst);
    return tail != &stub_ || head_.load(std::memory_order_relaxed) != &stub_;
  }
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // push: appends n (the caller gives up n until it is popped). Wait-free but for the
  // exchange; seq_cst so that a consumer about to park sees it (the wait protocols of
  // pinned_lane.h and shared_lane.h).
  void push(MailboxNode* n) noexcept {
    n->next.store(nullptr, std::memory_order_relaxed);
    MailboxNode* prev = tail_.exchange(n, std::memory_order_seq_cst);
    chaos_point();  // the half-linked state consumers must tolerate
    prev->next.store(n, std::memory_order_release);
  }

  // ConsumerToken: holds the consumer side for its lifetime (a short spin, never held
  // across user code). A waiter pauses before it yields (SpinWait): the holder, running,
  // lets go within nanoseconds, and on a loaded machine a yield gives the CPU away for a
  // time slice (lane.h: wait_for_link).
  class ConsumerToken {
   public:
    explicit ConsumerToken(Mailbox& m) noexcept : m_(m) {
      SpinWait spin;
      while (m_.token_.test_and_set(std::memory_order_acquire)) spin.once();
    }
    ~ConsumerToken() { m_.token_.clear(std::memory_order_release); }
    ConsumerToken(const ConsumerToken&) = delete;
    ConsumerToken& operator=(const ConsumerToken&) = delete;

   private:
    Mailbox& m_;
  };

  // pop: the oldest node, or null when empty or when a push is half done (retry soon).
  [[nodiscard]] MailboxNode* pop(const ConsumerToken&) noexcept {
    MailboxNode* head = head_.load(std::memory_order_relaxed);
    MailboxNode* next = head->next.load(std::memory_order_acquire);
    if (head == &stub_) {
      if (next == nullptr) return nullptr;
      set_head(next);
      head = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      set_head(next);
      return head;
    }
    if (tail_.load(std::memory_order_acquire) != head) return nullptr;  // a push is linking
    push(&stub_);
    next = head->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      set_head(next);
      return head;
    }
    return nullptr;
  }

  // peek: the node pop() would return next, left queued; null when empty. pop() may
  // still return null for it while its push is half done.
  [[nodiscard]] MailboxNode* peek(const ConsumerToken&) noexcept {
    MailboxNode* head = head_.load(std::memory_order_relaxed);
    if (head != &stub_) return head;
    MailboxNode* next = head->next.load(std::memory_order_acquire);
    if (next == nullptr) return nullptr;
    set_head(next);  // step over the stub, as pop() would
    return next;
  }

  // for_each_queued: calls f(node) for every node still queued, oldest first. Nodes
  // being linked by an unfinished push may be missed.
  template <class F>
  void for_each_queued(const ConsumerToken&, F&& f) {
    for (MailboxNode* n = head_.load(std::memory_order_relaxed); n != nullptr; n = n->next.load(std::memory_order_acquire)) {
      if (n != &stub_) f(n);
    }
  }

 private:
  void set_head(MailboxNode* n) noexcept { head_.store(n, std::memory_order_relaxed); }

  // Layout: the stub shares the producers' line. When the queue is empty a push links its
  // node to the stub, and the consumer that drained the queue re-pushed the stub (writing
  // its next and tail_): with the stub beside tail_ a push to an empty queue misses one
  // line, not two, and the consumer's token and head_ stay on a line producers never
  // write. (A compiled graph's step between two actors on two CPUs pushes to an empty
  // queue every time: measured in bench/README.md.)
  alignas(64) std::atomic<MailboxNode*> tail_;  // producers
  MailboxNode stub_;
  alignas(64) std::atomic<MailboxNode*> head_;  // consumers, under the token (atomic for maybe_nonempty)
  std::atomic_flag token_ = ATOMIC_FLAG_INIT;
};

}  // namespace tether
