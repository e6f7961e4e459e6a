// api_fuzz: libFuzzer reads each input as API call sequences run by 1-3 threads at once
// over a shared pool of live, released, forged and wrong-kind handles, with callbacks
// that succeed, fail, throw, block briefly, spawn nested threads or call back in.
//
// After each input every handle still live is released, and then, within a bound: no
// library thread is left (tether_debug_unjoined_threads), and every arg handed to the
// library was dropped exactly once (each is a heap object its drop deletes, so a second
// drop is a double free for ASan, a lost one a leak and a non-zero live count here).
// A forged or released handle must give TETHER_E_INVALID_HANDLE. Anything else aborts.
#include <tether/tether.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

// The callbacks (defined below, outside the anonymous namespace so they can call each other).
tether_status task_fn(tether_task* t, void* arg);
tether_status method_fn(tether_task* t, void* state, void* arg);

namespace {

[[noreturn]] void fail(const char* what, long long detail) {
  std::fprintf(stderr, "api_fuzz: %s (%lld)\n", what, detail);
  std::abort();
}

void check_status(tether_status rc) {
  if (rc < 0 || rc > TETHER_E_FORKED) fail("status outside the table", rc);
}

// ---- args: each one a heap object; its drop deletes it ------------------------------

std::atomic<long> g_live_args{0};

enum Behavior : uint8_t { kSucceed, kFail, kThrow, kThrowNonStd, kBlock, kSpawn, kCallBack, kBehaviors };

struct Arg {
  uint8_t behavior;
  uint8_t depth;  // nested spawns left
};

Arg* new_arg(uint8_t behavior, uint8_t depth) {
  g_live_args.fetch_add(1);
  return new Arg{static_cast<uint8_t>(behavior % kBehaviors), depth};
}
void drop_arg(void* p) {
  delete static_cast<Arg*>(p);
  g_live_args.fetch_sub(1);
}

// ---- callbacks ---------------------------------------------------------------------------

tether_status behave(tether_task* t, const Arg& a) {
  switch (a.behavior) {
    case kSucceed: return TETHER_OK;
    case kFail: return 5;
    case kThrow: throw std::runtime_error("fuzz callback threw");
    case kThrowNonStd: throw 42;
    case kBlock: std::this_thread::sleep_for(std::chrono::microseconds(200)); return TETHER_OK;
    case kSpawn: {
      if (a.depth == 0) return TETHER_OK;
      const tether_status rc = tether_task_spawn(t, "fz-nested", &task_fn, new_arg(a.depth * 3u, a.depth - 1), &drop_arg);
      check_status(rc);
      return TETHER_OK;
    }
    case kCallBack: {  // into the library from the callback: its own objects, no waits
      tether_runner r{0};
      if (tether_task_runner(t, &r) == TETHER_OK) {
        int32_t state = 0;
        check_status(tether_runner_poll(r, &state));
        check_status(tether_runner_join(r, 0));  // TIMEOUT (never DEADLOCK at 0)
      }
      tether_actor self{0};
      if (tether_task_actor(t, &self) == TETHER_OK) {
        tether_actor_stats stats{};
        stats.struct_size = sizeof stats;
        check_status(tether_actor_get_stats(self, &stats));
        check_status(tether_actor_call(self, nullptr, &method_fn, new_arg(kSucceed, 0), &drop_arg, nullptr));
      }
      (void)tether_task_stop_requested(t);
      return TETHER_OK;
    }
  }
  return TETHER_OK;
}

}  // namespace

tether_status task_fn(tether_task* t, void* arg) { return behave(t, *static_cast<Arg*>(arg)); }
tether_status method_fn(tether_task* t, void*, void* arg) { return behave(t, *static_cast<Arg*>(arg)); }

namespace {

tether_status ctor_fn(tether_task* t, void* arg, void** state) {
  *state = nullptr;
  const Arg& a = *static_cast<Arg*>(arg);
  return a.behavior == kSpawn ? TETHER_OK : behave(t, a);  // a ctor that spawns is covered by methods
}

tether_status node_fn(tether_task*, void*, void*, void* const*, size_t, void** output) {
  *output = nullptr;
  return TETHER_OK;
}

void notify_fn(void*) {}

// ---- the handle pool ----------------------------------------------------------------------

enum Kind : uint8_t { kRunner, kExecutor, kActor, kFuture, kError, kKinds };
constexpr size_t kSlots = 6;

struct Pool {
  std::mutex mu;
  uint64_t live[kKinds][kSlots] = {};   // guarded by mu: 0 = empty
  std::vector<uint64_t> stale[kKinds];  // guarded by mu: released ids, for reuse attempts

  // put: keeps id (releasing it at once when the kind is full).
  bool put(Kind k, uint64_t id) {
    std::lock_guard lock(mu);
    for (auto& s : live[k]) {
      if (s == 0) {
        s = id;
        return true;
      }
    }
    return false;
  }
  uint64_t peek(Kind k, uint8_t i) {
    std::lock_guard lock(mu);
    return live[k][i % kSlots];
  }
  // take: removes the id, for exactly one releaser.
  uint64_t take(Kind k, uint8_t i) {
    std::lock_guard lock(mu);
    uint64_t id = live[k][i % kSlots];
    live[k][i % kSlots] = 0;
    return id;
  }
  // retire: records an id whose release has RETURNED. Recorded at take, another thread
  // could poke it between the take and the release, while it is still live.
  void retire(Kind k, uint64_t id) {
    std::lock_guard lock(mu);
    if (stale[k].size() < 64) stale[k].push_back(id);
  }
  uint64_t stale_id(Kind k, uint8_t i) {
    std::lock_guard lock(mu);
    return stale[k].empty() ? 0 : stale[k][i % stale[k].size()];
  }
};

tether_status release(Kind k, uint64_t id, bool nowait) {
  switch (k) {
    case kRunner: return nowait ? tether_runner_release_nowait({id}) : tether_runner_release({id});
    case kExecutor: return nowait ? tether_executor_release_nowait({id}) : tether_executor_release({id});
    case kActor: return nowait ? tether_actor_release_nowait({id}) : tether_actor_release({id});
    case kFuture: return tether_future_release({id});
    default: return tether_error_release({id});
  }
}

// poke: a harmless query on id as kind k (the answer for a bad id is INVALID_HANDLE).
tether_status poke(Kind k, uint64_t id) {
  int32_t state = 0;
  switch (k) {
    case kRunner: return tether_runner_poll({id}, &state);
    case kExecutor: {
      tether_executor_stats s{};
      s.struct_size = sizeof s;
      return tether_executor_get_stats({id}, &s);
    }
    case kActor: return tether_actor_state({id}, &state, nullptr);
    case kFuture: return tether_future_poll({id}, &state);
    default: {
      char buf[8];
      (void)tether_error_message({id}, buf, sizeof buf);
      return tether_error_code({id}) == 0 ? TETHER_E_INVALID_HANDLE : TETHER_OK;
    }
  }
}

void keep_error(Pool& pool, tether_error e) {
  if (e.id != 0 && !pool.put(kError, e.id)) check_status(tether_error_release(e));
}

// ---- one thread's stream of operations ------------------------------------------------

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t next() { return n == 0 ? 0 : (--n, *p++); }
  bool done() const { return n == 0; }
};

int64_t small_timeout(uint8_t b) { return (b % 4) == 0 ? 0 : int64_t{b % 4} * 300 * 1000; }  // 0-0.9 ms

void run_ops(Pool& pool, Reader in) {
  while (!in.done()) {
    const uint8_t op = in.next() % 16;
    const uint8_t a = in.next(), b = in.next();
    switch (op) {
      case 0: {  // runner start
        tether_runner r{0};
        const tether_status rc = tether_runner_start(nullptr, &task_fn, new_arg(a, b % 3), &drop_arg, &r);
        check_status(rc);
        if (rc == TETHER_OK && !pool.put(kRunner, r.id)) check_status(tether_runner_release(r));
        break;
      }
      case 1: {  // executor create
        tether_executor_options o;
        tether_executor_options_init(&o);
        o.queue_capacity = a % 3 == 0 ? 2 : 0;
        o.idle_spin_ns = b % 2 ? 0 : 1000;
        tether_executor e{0};
        const tether_status rc = tether_executor_create(&o, &e);
        check_status(rc);
        if (rc == TETHER_OK && !pool.put(kExecutor, e.id)) check_status(tether_executor_release(e));
        break;
      }
      case 2: {  // actor create: own thread or a pooled executor, 0-2 groups
        const tether_group_spec groups[] = {{"g", 1}, {"h", 2}};
        tether_actor_options o;
        tether_actor_options_init(&o);
        o.groups = groups;
        o.group_count = a % 3;
        o.mailbox_capacity = b % 4 == 0 ? 2 : 0;
        if (b % 2) o.executor = {pool.peek(kExecutor, a)};
        tether_actor h{0};
        const tether_status rc = tether_actor_create(&o, &ctor_fn, nullptr, new_arg(a >> 2, 0), &drop_arg, &h);
        check_status(rc);
        if (rc == TETHER_OK && !pool.put(kActor, h.id)) check_status(tether_actor_release(h));
        break;
      }
      case 3: {  // executor submit, with or without a future
        tether_future f{0};
        const tether_status rc = tether_executor_submit({pool.peek(kExecutor, a)}, &task_fn, new_arg(b, b % 2),
                                                        &drop_arg, (a & 0x80) ? nullptr : &f);
        check_status(rc);
        if (f.id != 0 && !pool.put(kFuture, f.id)) check_status(tether_future_release(f));
        break;
      }
      case 4: {  // actor call: default thread, a group, a missing group; future or not
        const char* groups[] = {nullptr, "g", "h", "missing"};
        tether_future f{0};
        const tether_status rc = tether_actor_call_timeout({pool.peek(kActor, a)}, groups[b % 4], &method_fn,
                                                           new_arg(b >> 2, 1), &drop_arg,
                                                           (a & 0x80) ? nullptr : &f, small_timeout(a));
        check_status(rc);
        if (f.id != 0 && !pool.put(kFuture, f.id)) check_status(tether_future_release(f));
        break;
      }
      case 5: check_status(tether_future_wait({pool.peek(kFuture, a)}, small_timeout(b))); break;
      case 6: {  // future accessors
        const tether_future f{pool.peek(kFuture, a)};
        int32_t state = 0;
        check_status(tether_future_poll(f, &state));
        tether_error e{0};
        check_status(tether_future_error(f, &e));
        keep_error(pool, e);
        void* result = nullptr;
        check_status(tether_future_take_result(f, &result));
        if (b % 2) check_status(tether_future_on_done(f, &notify_fn, new_arg(0, 0), &drop_arg));
        break;
      }
      case 7: check_status(tether_future_cancel({pool.peek(kFuture, a)})); break;
      case 8: {  // runner accessors and waits
        const tether_runner r{pool.peek(kRunner, a)};
        check_status(tether_runner_join(r, small_timeout(b)));
        tether_error e{0};
        check_status(tether_runner_error(r, &e));
        keep_error(pool, e);
        size_t live = 0;
        check_status(tether_runner_live_threads(r, &live));
        if (b % 3 == 0) check_status(tether_runner_report_error(r, TETHER_E_TASK_FAILED, b, "fuzz"));
        if (b % 5 == 0) check_status(tether_runner_on_done(r, &notify_fn, new_arg(0, 0), &drop_arg));
        break;
      }
      case 9: check_status(tether_runner_cancel({pool.peek(kRunner, a)})); break;
      case 10:
        check_status(tether_actor_stop({pool.peek(kActor, a)}, b % 2 ? TETHER_STOP_CANCEL : TETHER_STOP_DRAIN,
                                       small_timeout(b)));
        break;
      case 11: {  // release one handle of any kind
        const auto k = static_cast<Kind>(a % kKinds);
        const uint64_t id = pool.take(k, b);
        if (id != 0) {
          const tether_status rc = release(k, id, (b & 0x80) != 0);
          if (rc != TETHER_OK) fail("release of a live handle failed", rc);
          pool.retire(k, id);
        }
        break;
      }
      case 12: {  // a forged id: random bits, or a live id with its generation bumped
        const auto k = static_cast<Kind>(a % kKinds);
        const uint64_t original = pool.peek(k, a);
        const bool bumped = b % 2 != 0;
        const uint64_t id = bumped ? original + (uint64_t{1} << 24) : (uint64_t{a} << 56) | (uint64_t{b} << 24) | (a ^ b);
        if (id == 0 || id == original) break;
        const tether_status rc = poke(k, id);
        // A forged id may by chance be live: only one that cannot be live must be refused.
        // A bumped id names the original's slot, which stays the original's while the original
        // is still in the pool after the poke (released, it could be reused at that generation).
        // Random bits are checked against the pool (an object made but not yet put is as
        // unlikely to match 64 random bits as any other).
        bool may_be_live = false;
        {
          std::lock_guard lock(pool.mu);
          if (bumped) {
            may_be_live = pool.live[k][a % kSlots] != original;
          } else {
            for (const auto& row : pool.live) {
              for (uint64_t s : row) may_be_live |= s == id;
            }
          }
        }
        if (!may_be_live && rc != TETHER_E_INVALID_HANDLE) fail("a forged handle was accepted", static_cast<long long>(id));
        break;
      }
      case 13: {  // a live handle of one kind used as another
        const auto k = static_cast<Kind>(a % kKinds);
        const auto other = static_cast<Kind>((a + 1 + b % (kKinds - 1)) % kKinds);
        const uint64_t id = pool.peek(k, b);
        if (id != 0 && poke(other, id) != TETHER_E_INVALID_HANDLE) fail("a wrong-kind handle was accepted", k);
        break;
      }
      case 14: {  // a released handle used again
        const auto k = static_cast<Kind>(a % kKinds);
        const uint64_t id = pool.stale_id(k, b);
        if (id != 0 && poke(k, id) != TETHER_E_INVALID_HANDLE) fail("a released handle was accepted", k);
        break;
      }
      case 15: {  // a graph over one pooled actor: build, compile, execute, release
        const tether_actor act{pool.peek(kActor, a)};
        tether_graph g{0};
        check_status(tether_graph_create(&g));
        uint32_t node = 0;
        tether_status rc = tether_graph_add_node(g, act, b % 3 == 0 ? "g" : nullptr, &node_fn, new_arg(0, 0), &drop_arg, &node);
        check_status(rc);
        if (rc == TETHER_OK) check_status(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, node));
        if (rc == TETHER_OK && b % 5 != 1) check_status(tether_graph_set_outputs(g, &node, 1));
        tether_compiled c{0};
        rc = tether_graph_compile(g, nullptr, &c);
        check_status(rc);
        if (rc != TETHER_OK) {
          tether_error e{0};
          check_status(tether_graph_error(g, &e));
          if (e.id == 0) fail("a failed compile left no error", rc);
          keep_error(pool, e);
        } else {
          for (int i = 0; i < 1 + b % 3; ++i) {
            tether_future f{0};
            check_status(tether_compiled_execute(c, new_arg(0, 0), &drop_arg, &f));
            if (f.id != 0 && !pool.put(kFuture, f.id)) check_status(tether_future_release(f));
          }
          check_status(b % 2 ? tether_compiled_release(c) : tether_compiled_release_nowait(c));
        }
        check_status(tether_graph_release(g));
        break;
      }
    }
  }
}

bool settled() { return tether_debug_unjoined_threads() == 0 && g_live_args.load() == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 4096) return -1;
  Pool pool;
  const size_t threads = 1 + data[0] % 3;
  // Each thread gets a contiguous share of the input.
  std::vector<std::thread> workers;
  const size_t body = size - 1, share = body / threads;
  for (size_t t = 0; t < threads; ++t) {
    const size_t from = 1 + t * share, len = t + 1 == threads ? body - t * share : share;
    workers.emplace_back([&pool, in = Reader{data + from, len}] { run_ops(pool, in); });
  }
  for (auto& w : workers) w.join();
  // Release what is left, futures and errors first, runners and executors before actors
  // that may share them (either order must work).
  for (Kind k : {kFuture, kError, kRunner, kActor, kExecutor}) {
    for (uint8_t i = 0; i < kSlots; ++i) {
      const uint64_t id = pool.take(k, i);
      if (id != 0 && release(k, id, false) != TETHER_OK) fail("final release failed", k);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!settled()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::fprintf(stderr, "api_fuzz: unjoined threads %zu, args not dropped %ld\n", tether_debug_unjoined_threads(),
                   g_live_args.load());
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return 0;
}
