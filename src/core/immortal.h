// immortal<T>(): the one T of the process, made on first use in static storage and never
// destroyed (library threads may use it while the process exits). Making it allocates
// nothing, so a first use cannot throw std::bad_alloc wherever it happens to come: T's
// default constructor must not allocate either (static_assert'ed noexcept).
#pragma once

#include <new>

namespace tether {

template <class T>
T& immortal() noexcept {
  static_assert(noexcept(T()), "an immortal's constructor must not throw (nor allocate)");
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* const object = new (storage) T();
  return *object;
}

}  // namespace tether
