// Publish<T>: how a creator in the core gives its new object a handle. The core never
// touches the handle table itself: the C boundary passes a function that inserts the
// object into its table (capi/handles.h). The creator calls it once, at the point after
// which creating cannot fail, and before anything the user wrote runs (a constructor
// asking for its actor must find the handle). It throws StatusError(NO_MEMORY): the
// creator then undoes what it started, as for any other failure.
#pragma once

#include <cstdint>
#include <memory>

namespace tether {

template <class T>
using Publish = uint64_t (*)(const std::shared_ptr<T>&);

}  // namespace tether
