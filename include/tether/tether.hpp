// tether.hpp — the C++ layer of tether: RAII owners, lambdas, exceptions.
//
// Header-only, C++20, written against the public C API (tether.h) and nothing else. A C++
// user never touches a raw handle:
//
//   auto exec   = tether::Executor::create({.name = "io"});
//   auto answer = exec.submit([] { return 6 * 7; });          // tether::Future<int>
//   int v       = answer.get();                              // 42, or throws tether::Error
//
//   struct Counter { int n = 0; };
//   auto actor = tether::Actor<Counter>::create({.name = "counter"},
//                                               [](tether::Task&) { return Counter{}; });
//   actor.post([](Counter& c) { ++c.n; });
//   int n = actor.call([](Counter& c) { return c.n; }).get();   // 1
//
// What it maps, and how:
//
//  - Owners. Runner, Executor, Actor<S>, Future<R>, Graph<In>, Compiled<In, Out...> and
//    Execution<Out...> each own one handle. They are
//    move-only; a moved-from (or default-constructed, or released) owner is EMPTY: its
//    destructor does nothing and every other member function throws tether::Error with
//    TETHER_E_INVALID_HANDLE. Destructors release: Runner, Executor and Actor with the
//    waiting release (a Runner is cancelled first, as tether_runner_release does; an Actor
//    is drained, then destroyed on its pinned thread), Future and Execution without waiting
//    (the work still runs; its result is dropped), Compiled by tearing its loops down
//    (never waiting for user code), Graph at once. release_nowait() ends a waiting owner at once and
//    leaves the waiting to the library's control thread. Move assignment releases what the
//    target owned first (with the same waiting release as its destructor).
//
// Where each part lives (every file compiles on its own; this one includes them all):
//
//   tether/hpp/error.hpp     Error; failures, and how a failing C call becomes an Error
//   tether/hpp/task.hpp      Task, State; lambdas, results, exceptions out of user code,
//                            timeouts (the trampolines between the C API and callables)
//   tether/hpp/future.hpp    Future<R>, wait_any, wait_any_for
//   tether/hpp/runner.hpp    Runner, RunnerOptions
//   tether/hpp/executor.hpp  Executor, ExecutorOptions, ExecutorStats (ActorStats)
//   tether/hpp/actor.hpp     Actor<S>, ActorOptions, GroupSpec, ActorState, StopMode
//   tether/hpp/graph.hpp     Graph<In>, Node<T>, Compiled<In, Out...>, Execution<Out...>
//   tether/hpp/detail/unique_handle.hpp  detail::UniqueHandle: the moves and the release
//                            of one C handle, for Runner, Executor, Future, Actor,
//                            Compiled and Graph
//
// Include this header, not the parts: which part holds what may change.
//
// Thread safety: every member function that does not end or move the handle (release,
// release_nowait, take_result, get, move assignment, destruction) may be called from any
// thread concurrently, as the C functions they call. Task is valid only inside its
// callback, on that callback's thread.
#ifndef TETHER_TETHER_HPP
#define TETHER_TETHER_HPP

#include "tether.h"

#include "hpp/error.hpp"
#include "hpp/task.hpp"
#include "hpp/future.hpp"
#include "hpp/runner.hpp"
#include "hpp/executor.hpp"
#include "hpp/actor.hpp"
#include "hpp/graph.hpp"

#endif  // TETHER_TETHER_HPP
