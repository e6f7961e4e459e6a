// headertest.cpp: <tether/tether.hpp> on its own, as a user's C++20 translation unit
// compiled with -std=c++20 -Wall -Wextra -Werror -pedantic and more. Besides including
// the header, it instantiates every template of it (so the warnings cover their bodies)
// and runs one call of each owner.
#include <tether/tether.hpp>

namespace {

struct State {
  int n = 0;
};

int run() {
  using namespace std::chrono_literals;
  tether::Runner r = tether::Runner::start({.name = "hdr-run"}, [](tether::Task& t) {
    t.spawn("hdr-kid", [](tether::Task& k) { (void)k.stop_requested(); });
    t.spawn([] {});
    return 1;
  });
  r.on_done([] {});
  if (!r.join_for(20s) || r.join_result<int>() != 1) return 1;
  (void)r.errors();

  tether::Executor e = tether::Executor::create({.name = "hdr-exec", .idle_spin = 1us});
  e.post([] {});
  e.post([](tether::Task& t) { return t.thread_name().size(); });
  tether::Future<int> f = e.submit([] { return 2; });
  tether::Future<void> v = e.submit_for(20s, [](tether::Task&) {});
  f.on_done([] {});
  std::vector<tether::Future<int>> fs;
  fs.push_back(e.submit([] { return 3; }));
  if (tether::wait_any(fs) != 0 || !tether::wait_any_for(fs, 20s)) return 2;
  if (f.get() != 2) return 3;
  v.get();
  (void)e.stats();
  (void)e.errors();

  // An actor on a thread of its own (ActorOptions' defaults), with a group.
  auto a = tether::Actor<State>::create({.name = "hdr-actor", .executor = nullptr, .groups = {{"io", 1}}},
                                        [](tether::Task&) { return std::make_unique<State>(); });
  a.post([](State& s) { ++s.n; });
  a.post_in("io", [](State&, tether::Task&) {});
  tether::Future<int> c = a.call([](State& s) { return s.n; });
  tether::Future<int> g = a.call_in("io", [](State&, tether::Task&) { return 4; });
  tether::Future<int> h = a.call_for(20s, [](State& s) { return s.n; });
  tether::Future<int> k = a.call_in_for("io", 20s, [](State&) { return 5; });
  if (c.get() != 1 || g.get() != 4 || h.get() != 1 || k.get() != 5) return 4;
  if (a.state() != tether::ActorState::Alive || a.dead_cause()) return 5;
  (void)a.stats();
  (void)a.errors();

  tether::Graph<int> gr;
  auto n1 = gr.add(a, [](State& s, const int& x) { return s.n + x; }, gr.input());
  auto n2 = gr.add_in(a, "io", [](State&, const int& x, const int& y, tether::Task&) { return static_cast<long>(x + y); },
                      n1, gr.input());
  auto cg = gr.compile({.channel_capacity = 2}, n2, n1);
  auto [sum, first] = cg.execute_for(20s, 3).get();
  if (sum != 7 || first != 4 || gr.error()) return 7;
  cg.release();
  if (!a.stop(tether::StopMode::Drain, 20s)) return 6;
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const tether::Error& e) {
    return 10 + e.code();
  }
}
