#include "core/lazy_thread_group.h"

namespace tether {

std::shared_ptr<ThreadGroup> LazyThreadGroup::get() {
  std::lock_guard lock(mutex_);
  if (!group_) {
    group_ = std::make_shared<ThreadGroup>();
    if (orphaned_) group_->orphan();
  }
  return group_;
}

void LazyThreadGroup::orphan() {
  std::shared_ptr<ThreadGroup> group;
  {
    std::lock_guard lock(mutex_);
    orphaned_ = true;
    group = group_;
  }
  if (group) group->orphan();
}

void LazyThreadGroup::join_all() {
  std::shared_ptr<ThreadGroup> group;
  {
    std::lock_guard lock(mutex_);
    group = group_;
  }
  if (group) group->join_all();
}

}  // namespace tether
