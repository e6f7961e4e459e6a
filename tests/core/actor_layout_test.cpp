// actor_layout_test.cpp: an actor's block (actor.h, "Layout"): the ledger's lines start
// where the block's lines do, as the layout assumes of std::allocate_shared (its count
// before the actor, 16 bytes); and the destructor call, which lives inside the actor,
// keeps it until its lane is done with the call, then lets it go.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "core/actor.h"
#include "core/executor.h"
#include "support/waits.h"

namespace core_test {
namespace {

using tether::Actor;
using tether::Deadline;
using tether::Executor;
using tether::UserArg;

// handles: what a handle table would hold for the actors create published (create hands
// out only the id); published: each, to see when it ends.
std::vector<std::shared_ptr<Actor>>& handles() {
  static std::vector<std::shared_ptr<Actor>> held;
  return held;
}
std::vector<std::weak_ptr<Actor>>& published() {
  static std::vector<std::weak_ptr<Actor>> made;
  return made;
}

uint64_t publish(const std::shared_ptr<Actor>& actor) {
  handles().push_back(actor);
  published().push_back(actor);
  return published().size();
}

// release_all: each handle's end, as tether_actor_release makes it (the table's reference
// taken out, the actor released, the reference dropped).
void release_all(bool wait) {
  std::vector<std::shared_ptr<Actor>> held = std::move(handles());
  handles().clear();
  for (std::shared_ptr<Actor>& a : held) {
    a->release(wait);
    a.reset();
  }
}

tether_status no_state(tether_task*, void*, void** state) {
  *state = nullptr;
  return TETHER_OK;
}

std::atomic<int> g_destructed{0};
void count_destructor(void*) { g_destructed.fetch_add(1); }

Actor& make(const std::shared_ptr<Executor>& on) {
  Actor::Options options;
  options.executor = on;
  (void)Actor::create(std::move(options), no_state, count_destructor, UserArg(), &publish);
  return *handles().back();
}

TEST(ActorLayout, TheLedgerStartsALineOfTheBlock) {
  published().clear();
  std::shared_ptr<Executor> executor = Executor::create(Executor::Options{});
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(make(executor).ledger_starts_a_line()) << i;  // more than a chunk of 64
  release_all(/*wait=*/true);
  executor->release_handle(/*wait=*/true);
}

TEST(ActorLayout, TheDestructorCallLetsTheActorGoWhenItsLaneIsDone) {
  published().clear();
  g_destructed.store(0);
  std::shared_ptr<Executor> executor = Executor::create(Executor::Options{});
  constexpr int kActors = 8;
  for (int i = 0; i < kActors; ++i) (void)make(executor);
  release_all(/*wait=*/false);  // from here on only each destructor call holds its actor
  // Each actor ends once its destructor call is done with (not before: the call lives in
  // it; ASan and valgrind would see a touch after the end).
  EXPECT_TRUE(tether_test::wait_until(
      [] {
        for (const auto& weak : published()) {
          if (!weak.expired()) return false;
        }
        return true;
      },
      std::chrono::nanoseconds(tether_test::kLongNs)));
  EXPECT_EQ(kActors, g_destructed.load());
  executor->release_handle(/*wait=*/true);
}

}  // namespace
}  // namespace core_test
