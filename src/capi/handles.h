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
class Graph;
class Scope;
struct Error;
}  // namespace tether

namespace tether::capi {

template <class H>
struct handle_traits;  // object: what the handle names; kind: its table kind

template <>
struct handle_traits<tether_runner> {
  using object = Scope;
  static constexpr Kind kind = Kind::Runner;
};
template <>
struct handle_traits<tether_executor> {
  using object = Executor;
  static constexpr Kind kind = Kind::Executor;
};
template <>
struct handle_traits<tether_actor> {
  using object = Actor;
  static constexpr Kind kind = Kind::Actor;
};
template <>
struct handle_traits<tether_future> {
  using object = Scope;
  static constexpr Kind kind = Kind::Future;
};
template <>
struct handle_traits<tether_error> {
  using object = const Error;
  static constexpr Kind kind = Kind::Error;
};
template <>
struct handle_traits<tether_graph> {
  using object = Graph;
  static constexpr Kind kind = Kind::Graph;
};
template <>
struct handle_traits<tether_compiled> {
  using object = CompiledGraph;
  static constexpr Kind kind = Kind::Compiled;
};

template <class H>
using object_of = typename handle_traits<H>::object;

// lookup: the object h names (shared: it stays alive while the caller uses it). Throws
// StatusError (see above).
template <class H>
[[nodiscard]] std::shared_ptr<object_of<H>> lookup(H h) {
  return HandleTable::instance().get<object_of<H>>(handle_traits<H>::kind, h.id);
}

// take: as lookup, and h is released: every later use of it is INVALID_HANDLE.
template <class H>
[[nodiscard]] std::shared_ptr<object_of<H>> take(H h) {
  return HandleTable::instance().take<object_of<H>>(handle_traits<H>::kind, h.id);
}

// make_handle: a new handle of type H naming obj. Throws StatusError(NO_MEMORY).
template <class H>
[[nodiscard]] H make_handle(std::shared_ptr<object_of<H>> obj) {
  return H{HandleTable::instance().insert(handle_traits<H>::kind, std::const_pointer_cast<std::remove_const_t<object_of<H>>>(std::move(obj)))};
}

}  // namespace tether::capi
