#include "core/waited_call.h"

#include "core/answer_spin.h"
#include "core/hot_path.h"
#include "core/hot_tls.h"
#include "core/thread_exit.h"
#include "platform/platform.h"

namespace tether {

namespace {
TETHER_HOT_TLS constinit thread_local ThreadLocalSlot<WaitedCall, Cleanup::WaitedCall> t_waited_call;
void destroy_waited_call() noexcept { t_waited_call.destroy(); }
}  // namespace

TETHER_HOT_PATH WaitedCall* WaitedCall::of_this_thread() noexcept { return t_waited_call.get(&destroy_waited_call); }

void WaitedCall::marker(void*) noexcept {}

TETHER_HOT_PATH void WaitedCall::arm(void* arg, tether_drop_fn arg_drop, LanePresence* partner) noexcept {
  // W1. The previous call's end (E3) happened before its wait returned: nobody else
  // touches these now.
  arg_ = arg;
  arg_drop_ = arg_drop;
  partner_ = partner;
  state_ = TETHER_PENDING;
  word_.store(kWaiting, std::memory_order_relaxed);
  // The post that follows publishes all of it (its ring's release store).
}

TETHER_HOT_PATH int32_t WaitedCall::wait() noexcept {
  AnswerSpin::spin_for_word(partner_, word_, kDone);  // W2
  for (;;) {
    uint32_t word = word_.load(std::memory_order_acquire);
    if (word == kDone) break;
    // W3: announce the park; a CAS that fails saw E3 (kDone), and loops to see it.
    if (word == kWaiting && !word_.compare_exchange_strong(word, kParked, std::memory_order_acq_rel)) continue;
    platform::park_while(word_, kParked, -1);  // W4
  }
  return state_;  // E1's, ordered by the acquire of kDone
}

TETHER_HOT_PATH void WaitedCall::end(int32_t terminal, ErrorPtr err) noexcept {
  error_ = std::move(err);  // E1
  state_ = terminal;
  if (word_.exchange(kDone, std::memory_order_acq_rel) == kParked) {  // E3
    platform::wake_all_parked(word_);  // E4: the thread-local's address only
  }
}

}  // namespace tether
