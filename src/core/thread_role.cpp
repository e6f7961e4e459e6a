#include "core/thread_role.h"

#include "core/hot_path.h"
#include "core/hot_tls.h"

namespace tether {
namespace {

TETHER_HOT_TLS constinit thread_local ThreadRole t_role{};

}  // namespace

TETHER_HOT_PATH ThreadRole& this_thread_role() noexcept { return t_role; }

}  // namespace tether
