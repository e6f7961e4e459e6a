// nowait_test.cpp: release_nowait on the owners that wait — it returns at once, while user
// code is still blocked, and the library finishes the release on its control thread.
//
// A binary of its own: release_nowait hands the pthread_join of the object's threads to
// the library's control thread, and the C API offers no way to wait for that join. A
// process that exits right after the drop (as each ctest case does) may exit between the
// thread's end and its join, which ThreadSanitizer reports as a "thread leak". That report
// is switched off here, and only here: the other binaries keep it, where it catches
// threads the library never joins.
#include <memory>

#include "support.h"

#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_options() { return "report_thread_leaks=0"; }
#endif

namespace {

using namespace hpp_test;
using tether::Actor;
using tether::Executor;
using tether::Runner;
using tether::Task;

// Probe: counts its destruction.
struct Probe {
  std::shared_ptr<Counter> dtors;
  ~Probe() { dtors->add(); }
};

TEST(Nowait, RunnerReturnsAtOnce) {
  auto drops = std::make_shared<Counter>();
  Gate started, go;
  Runner r = Runner::start({.name = "hpp-nowait"}, [&, token = Token(drops)](Task&) {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  r.release_nowait();  // the target is blocked: this must not wait for it
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(0, drops->get());
  go.set();
  EXPECT_TRUE(drops->wait_for(1)) << "the library finishes the runner and drops the closure";
}

TEST(Nowait, ActorLetsTheDrainFinishInTheLibrary) {
  auto dtors = std::make_shared<Counter>();
  auto actor = Actor<Probe>::create([dtors] { return Probe{dtors}; });
  Gate started, go;
  actor.post([&](Probe&) {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  actor.release_nowait();
  EXPECT_FALSE(actor.valid());
  EXPECT_EQ(0, dtors->get());
  go.set();
  EXPECT_TRUE(dtors->wait_for(1));
}

TEST(Nowait, ExecutorRunsWhatIsQueuedAfterwards) {
  Executor e = Executor::create({.name = "hpp-nowait-ex"});
  Gate started, go;
  Counter ran;
  e.post([&] {
    started.set();
    EXPECT_TRUE(go.wait_for());
  });
  ASSERT_TRUE(started.wait_for());
  for (int i = 0; i < 3; ++i) e.post([&ran] { ran.add(); });
  e.release_nowait();
  EXPECT_FALSE(e.valid());
  EXPECT_EQ(0, ran.get());
  go.set();
  EXPECT_TRUE(ran.wait_for(3)) << "what was queued still runs";
}

}  // namespace
