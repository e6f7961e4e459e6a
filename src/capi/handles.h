// The C handle types and the core object each names, so that the C boundary looks
// handles up, takes them out of the table and makes new ones one way. The table itself
// (core/handle_table.h) checks the kind and the generation: a stale, released or
// foreign handle is TETHER_E_INVALID_HANDLE (TETHER_E_FORKED for a parent's in a child).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "core/handle_table.h"
#include "tether/tether.h"

namespace tether {
class Actor;
class CompiledGraph;
class Executor;
class Future;
class Graph;
class Scope;
struct Error;
}  // namespace tether

namespace tether::capi {

// handle_traits<H>: object, what the handle names; kind, its kind in the table.
template <class H>
struct handle_traits;

template <class Object, Kind K>
struct names {
  using object = Object;
  static constexpr Kind kind = K;
};

template <> struct handle_traits<tether_runner> : names<Scope, Kind::Runner> {};
template <> struct handle_traits<tether_executor> : names<Executor, Kind::Executor> {};
template <> struct handle_traits<tether_actor> : names<Actor, Kind::Actor> {};
template <> struct handle_traits<tether_future> : names<Future, Kind::Future> {};
template <> struct handle_traits<tether_error> : names<const Error, Kind::Error> {};
template <> struct handle_traits<tether_graph> : names<Graph, Kind::Graph> {};
template <> struct handle_traits<tether_compiled> : names<CompiledGraph, Kind::Compiled> {};

template <class H>
using object_of = typename handle_traits<H>::object;

// lookup: the object h names (shared: it stays alive while the caller uses it). Throws
// StatusError (see above).
template <class H>
[[nodiscard]] std::shared_ptr<object_of<H>> lookup(H h) {
  return HandleTable::instance().get<object_of<H>>(handle_traits<H>::kind, h.id);
}

// take: as lookup, and h is released: every later use of it is INVALID_HANDLE.
// visit: f(object, owner) under h's slot lock, with no reference taken (HandleTable::visit:
// only for what neither allocates, waits, calls out nor throws).
template <class H, class F>
decltype(auto) visit(H h, F&& f) {
  return HandleTable::instance().visit<object_of<H>>(handle_traits<H>::kind, h.id, std::forward<F>(f));
}

template <class H>
[[nodiscard]] std::shared_ptr<object_of<H>> take(H h) {
  return HandleTable::instance().take<object_of<H>>(handle_traits<H>::kind, h.id);
}

// make_handle: a new handle of type H naming obj. Throws StatusError(NO_MEMORY).
template <class H>
[[nodiscard]] H make_handle(std::shared_ptr<object_of<H>> obj) {
  using Mutable = std::remove_const_t<object_of<H>>;  // the table stores shared_ptr<void>
  return H{HandleTable::instance().insert(handle_traits<H>::kind, std::const_pointer_cast<Mutable>(std::move(obj)))};
}

// publish: make_handle as the core's creators take it (core/publish.h): the id.
template <class H>
[[nodiscard]] uint64_t publish(const std::shared_ptr<object_of<H>>& obj) {
  return make_handle<H>(obj).id;
}

}  // namespace tether::capi
