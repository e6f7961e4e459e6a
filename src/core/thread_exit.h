// thread_exit: the library's per-thread cleanups, run when a thread ends, without C++
// thread_local destructors. Registering one of those (__cxa_thread_atexit) allocates, and
// glibc aborts the process when it cannot ("failed to register TLS destructor"), on
// whatever thread first touches the variable — inside noexcept code, with no caller to
// tell. Here the platform's one exit notice (platform::notify_at_thread_exit, a pthread
// key on POSIX) carries every cleanup of a thread: arming it stores a pointer (no
// allocation for the first 32 keys) and can fail softly.
//
// Order at a thread's end: every C++ thread_local destructor of the thread (the
// application's), then these cleanups in Cleanup order, then the thread's exit notice
// (ThreadGroup::exited), last, so an owner hears of the exit only once all of them ran.
// The notice goes out in the platform's second round of thread-specific destructors
// (POSIX runs another round while a destructor sets a value again), so also after every
// pthread-key destructor of the application that did not set its value again.
//
// Thread safety: each function acts on the calling thread's own state only.
#pragma once

#include <new>

namespace tether {

// Cleanup: what runs at a thread's end, in this order.
// FutureGraveyard first: what it drops goes back to the pools after it.
enum class Cleanup { FutureGraveyard, ActorCache, WaitedCall, LastError, CallPool, CallFuturePool, ScopePool, kCount };

// arm_cleanup: fn runs at this thread's end (once per arming; re-arming from a cleanup
// that runs is allowed). False when it could not be armed (no memory): fn will not run,
// and the caller must not keep state that needs it.
[[nodiscard]] bool arm_cleanup(Cleanup which, void (*fn)() noexcept) noexcept;

// set_exit_notice: fn(arg) runs after every cleanup, when this thread ends. False when it
// could not be armed (the caller then gives the notice itself).
[[nodiscard]] bool set_exit_notice(void (*fn)(void*) noexcept, void* arg) noexcept;

// ThreadLocalSlot: storage for a T made on first use and destroyed by its cleanup. Being
// trivially destructible itself, a thread_local of it registers nothing with the C++
// runtime. get() returns null once destroyed, or when the cleanup could not be armed.
template <class T, Cleanup Which>
class ThreadLocalSlot {
 public:
  T* get(void (*destroy)() noexcept) noexcept {
    if (state_ == kLive) return ptr();
    if (state_ != kEmpty || !arm_cleanup(Which, destroy)) return nullptr;
    new (storage_) T();
    state_ = kLive;
    return ptr();
  }
  // peek: the T if it was made and is not destroyed; never makes one.
  T* peek() noexcept { return state_ == kLive ? ptr() : nullptr; }
  // destroy: the cleanup's body. Later get()s return null (a thread-local destructor of
  // the application may call in after it).
  void destroy() noexcept {
    if (state_ != kLive) return;
    state_ = kGone;
    ptr()->~T();
  }
  [[nodiscard]] bool gone() const noexcept { return state_ == kGone; }

 private:
  enum : unsigned char { kEmpty, kLive, kGone };
  T* ptr() noexcept { return reinterpret_cast<T*>(storage_); }
  alignas(T) unsigned char storage_[sizeof(T)] = {};  // zeroed: constant-initialized, so no TLS init wrapper
  unsigned char state_ = kEmpty;
};

}  // namespace tether
