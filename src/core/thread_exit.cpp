#include "core/thread_exit.h"

#include "core/hot_tls.h"
#include "platform/platform.h"

namespace tether {
namespace {

constexpr int kCleanups = static_cast<int>(Cleanup::kCount);
// The platform runs the exit function again (at least 4 rounds) while cleanups re-arm it;
// the exit notice goes out at the latest in this round.
constexpr int kLastRound = 3;

// The thread's cleanups. Trivially destructible: it needs no cleanup itself.
struct ExitState {
  void (*cleanups[kCleanups])() noexcept;
  void (*notice)(void*) noexcept;
  void* notice_arg;
  bool key_set;  // armed with this state's address (the platform disarms before each call)
  int rounds;
};
TETHER_HOT_TLS thread_local ExitState t_exit{};

void run_exit(void* raw) noexcept;

bool set_key(ExitState& s) noexcept {
  if (s.key_set) return true;
  if (!platform::notify_at_thread_exit(&run_exit, &s)) return false;
  s.key_set = true;
  return true;
}

void run_exit(void* raw) noexcept {
  auto& s = *static_cast<ExitState*>(raw);
  s.key_set = false;  // the platform disarmed it; a cleanup that re-arms sets it again
  for (auto& fn : s.cleanups) {
    void (*run)() noexcept = fn;
    fn = nullptr;
    if (run != nullptr) run();
  }
  // The notice waits for the second round at least: after every other destructor of the
  // first, whatever its key's place in the order (the application's thread-specific
  // destructors: its owner, told the thread ended, releases it without joining it,
  // thread_group.h).
  if (s.rounds == 0 && s.notice != nullptr) (void)set_key(s);
  if (s.key_set && ++s.rounds < kLastRound) return;  // re-armed: the notice waits for the next round
  void (*notice)(void*) noexcept = s.notice;
  s.notice = nullptr;
  if (notice != nullptr) notice(s.notice_arg);
}

}  // namespace

bool arm_cleanup(Cleanup which, void (*fn)() noexcept) noexcept {
  ExitState& s = t_exit;
  if (!set_key(s)) return false;
  s.cleanups[static_cast<int>(which)] = fn;
  return true;
}

bool set_exit_notice(void (*fn)(void*) noexcept, void* arg) noexcept {
  ExitState& s = t_exit;
  if (!set_key(s)) return false;
  s.notice = fn;
  s.notice_arg = arg;
  return true;
}

}  // namespace tether
