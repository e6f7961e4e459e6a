// tether/hpp/graph.hpp — compiled graphs: tether::Graph<In>, Node<T>, Compiled<In, Out...>
// and Execution<Out...>. Part of the C++ layer; include <tether/tether.hpp>.
#ifndef TETHER_HPP_GRAPH_HPP
#define TETHER_HPP_GRAPH_HPP

#include "actor.hpp"
#include "detail/unique_handle.hpp"
#include "error.hpp"
#include "future.hpp"
#include "task.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tether {

// ------------------------------------------------------------------------------------------
// Compiled graphs: Graph<In>, Node<T>, Compiled<In, Out...>, Execution<Out...>
// ------------------------------------------------------------------------------------------
//
//   tether::Graph<long> g;
//   auto fwd = g.add(worker0, [](Worker& w, const long& x) { return w.forward(x); }, g.input());
//   auto bwd = g.add(worker1, [](Worker& w, const long& y) { return w.backward(y); }, fwd);
//   auto compiled = g.compile({.channel_capacity = 8}, bwd);   // Compiled<long, long>
//   auto [out] = compiled.execute(3).get();                     // std::tuple<long>
//
// Values are typed: a node's function takes its actor's state, then a const reference to
// each input's value (in the order given), then optionally a tether::Task&, and returns an
// object type. Each value lives in its own heap box that the execution owns (the C API's
// value_drop deletes it): consumers borrow it during their call, outputs are moved out by
// get(). Node functions are kept for the compiled graph's life and called once per
// execution, as lvalues (so they may keep state of their own, touched only on their thread).

namespace detail {

// ValueBase / Value<T>: a graph value in a heap box of its own type, deleted through the base.
struct ValueBase {
  virtual ~ValueBase() = default;
};
template <class T>
struct Value final : ValueBase {
  template <class Make>
  explicit Value(std::in_place_t, Make&& make) : v(std::forward<Make>(make)()) {}
  T v;
};
inline void drop_value(void* p) noexcept { delete static_cast<ValueBase*>(p); }

struct GraphAccess;

}  // namespace detail

// Node<T>: a node of a Graph whose value is a T (or the graph's input).
template <class T>
class Node {
 public:
  using value_type = T;
  [[nodiscard]] uint32_t index() const noexcept { return index_; }

 private:
  friend struct detail::GraphAccess;
  explicit Node(uint32_t index) noexcept : index_(index) {}
  uint32_t index_;
};

// CompileOptions: executions in flight at most (1 to 1048576).
struct CompileOptions {
  size_t channel_capacity = 8;
};

template <class In, class... Out>
class Compiled;

// Execution<Out...>: one execution of a compiled graph. Move-only; its destructor releases
// the handle (the execution goes on; outputs never taken are destroyed with it).
template <class... Out>
class Execution {
 public:
  Execution() noexcept = default;

  [[nodiscard]] bool valid() const noexcept { return future_.valid(); }
  // poll: Pending until the execution has ended, then Succeeded, Failed or Cancelled.
  [[nodiscard]] State poll() const { return future_.poll(); }
  void wait() const { future_.wait(); }
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    return future_.wait_for(timeout);
  }
  // error: the first failing node's error (TETHER_E_CANCELLED for a cancelled execution).
  [[nodiscard]] std::optional<Error> error() const { return future_.error(); }
  // cancel: the nodes not yet started never run.
  void cancel() const { future_.cancel(); }

  // get: waits, then moves the outputs out (once; a second get throws
  // TETHER_E_WRONG_STATE), or throws the execution's Error.
  std::tuple<Out...> get() {
    future_.wait();
    if (future_.poll() != State::Succeeded) {
      if (std::optional<Error> e = future_.error()) throw *e;
      throw Error(TETHER_E_INTERNAL, "the execution did not succeed");
    }
    if (taken_) throw Error(TETHER_E_WRONG_STATE, "tether::Execution::get: the outputs were already taken");
    void* outs[sizeof...(Out)] = {};
    detail::check(tether_future_outputs(future_.c_handle(), outs, sizeof...(Out)));
    taken_ = true;
    std::unique_ptr<detail::ValueBase> owned[sizeof...(Out)];
    for (size_t i = 0; i < sizeof...(Out); ++i) owned[i].reset(static_cast<detail::ValueBase*>(outs[i]));
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Out...>(std::move(static_cast<detail::Value<Out>*>(owned[I].get())->v)...);
    }(std::index_sequence_for<Out...>{});
  }

  // c_handle: the future's raw handle, still owned by this Execution.
  [[nodiscard]] tether_future c_handle() const noexcept { return future_.c_handle(); }

 private:
  template <class In, class... O>
  friend class Compiled;
  explicit Execution(Future<void> f) noexcept : future_(std::move(f)) {}
  Future<void> future_;
  bool taken_ = false;
};

// Compiled<In, Out...>: a graph's loops installed on its actors' threads. Move-only; the
// destructor tears them down (release) without waiting for user code.
template <class In, class... Out>
class Compiled {
 public:
  Compiled() noexcept = default;
  Compiled(Compiled&&) noexcept = default;             // h_ moves: the source is left empty
  Compiled& operator=(Compiled&&) noexcept = default;  // releases what this owned first
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;

  [[nodiscard]] bool valid() const noexcept { return h_.valid(); }

  // execute: starts one execution. Throws Error (TETHER_E_QUEUE_FULL with channel_capacity
  // executions in flight, TETHER_E_SHUTDOWN when an actor stopped, ...).
  [[nodiscard]] Execution<Out...> execute(In input) const { return execute_ns(std::move(input), 0); }
  // execute_for: as execute, but waits up to `timeout` for room (TETHER_E_TIMEOUT after it).
  template <class Rep, class Period>
  [[nodiscard]] Execution<Out...> execute_for(std::chrono::duration<Rep, Period> timeout, In input) const {
    return execute_ns(std::move(input), detail::timeout_ns(timeout));
  }

  // release: tears the loops down now: executions not yet ended are cancelled; a running
  // node finishes on its own.
  void release() {
    detail::require(h_.get().id, "tether::Compiled");
    detail::check(tether_compiled_release(h_.take()));
  }

  [[nodiscard]] tether_compiled c_handle() const noexcept { return h_.get(); }

 private:
  friend struct detail::GraphAccess;
  explicit Compiled(tether_compiled h) noexcept : h_(h) {}

  Execution<Out...> execute_ns(In input, int64_t ns) const {
    detail::require(h_.get().id, "tether::Compiled");
    auto* value = new detail::Value<In>(std::in_place, [&]() -> In { return std::move(input); });
    tether_future f{0};
    detail::check(ns == 0 ? tether_compiled_execute(h_.get(), value, &detail::drop_value, &f)
                          : tether_compiled_execute_timeout(h_.get(), value, &detail::drop_value, &f, ns));
    return Execution<Out...>(detail::FutureAccess<void>::make(f));
  }

  detail::UniqueHandle<tether_compiled, &tether_compiled_release> h_;
};

namespace detail {

struct GraphAccess {
  template <class T>
  [[nodiscard]] static Node<T> node(uint32_t index) noexcept {
    return Node<T>(index);
  }
  template <class In, class... Out>
  [[nodiscard]] static Compiled<In, Out...> compiled(tether_compiled h) noexcept {
    return Compiled<In, Out...>(h);
  }
};

// node_trampoline: the C node function of a node whose callable D takes (S&, const Ts&...).
template <class S, class D, class... Ts>
tether_status node_trampoline(tether_task* t, void* state, void* arg, void* const* inputs, size_t n,
                              void** output) {
  if (n != sizeof...(Ts)) return tether_task_fail(t, 0, "tether::Graph: a node got an unexpected number of inputs");
  Task task = TaskAccess::make(t);
  D& fn = static_cast<Box<D>*>(arg)->fn;
  S& s = *static_cast<S*>(state);
  using R = call_result_t<D&, S, const Ts...>;
  *output = [&]<size_t... I>(std::index_sequence<I...>) {
    return new Value<R>(std::in_place, [&]() -> R {
      return call(fn, task, s, static_cast<const Value<Ts>*>(inputs[I])->v...);
    });
  }(std::index_sequence_for<Ts...>{});
  return TETHER_OK;
}

}  // namespace detail

// Graph<In>: a pipeline of actor methods fed with an In. Move-only; the destructor
// releases the description (compiled graphs made from it live on).
template <class In>
class Graph {
 public:
  Graph() {
    detail::check(tether_graph_create(h_.out()));
  }
  Graph(Graph&&) noexcept = default;             // h_ moves: the source is left empty
  Graph& operator=(Graph&&) noexcept = default;  // releases what this owned first
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // input: the execution's input, as a node to feed others with.
  [[nodiscard]] Node<In> input() const noexcept { return detail::GraphAccess::node<In>(TETHER_GRAPH_INPUT); }

  // add: a node running fn(S&, const T&..., [Task&]) on the actor's default thread (the
  // constructor's), fed by `inputs` in this order. Throws Error.
  template <class S, class F, class... Ts>
  [[nodiscard]] auto add(const Actor<S>& actor, F&& fn, Node<Ts>... inputs) {
    return add_impl<S>(actor, nullptr, std::forward<F>(fn), inputs...);
  }
  // add_in: as add, on the actor's concurrency group `group`, which must have one thread.
  template <class S, class F, class... Ts>
  [[nodiscard]] auto add_in(const Actor<S>& actor, std::string_view group, F&& fn, Node<Ts>... inputs) {
    const std::string g(group);
    return add_impl<S>(actor, g.c_str(), std::forward<F>(fn), inputs...);
  }

  // compile: installs the graph's loop on its actors' threads, with `outputs` as the
  // execution's outputs. Throws Error (TETHER_E_THREAD_BUSY, TETHER_E_INVALID_ARGUMENT for
  // a cycle or an unreachable node, ...; error() says the same).
  template <class... Out>
  [[nodiscard]] Compiled<In, Out...> compile(const CompileOptions& options, Node<Out>... outputs) const {
    static_assert(sizeof...(Out) > 0, "tether::Graph::compile: name at least one output");
    need();
    const uint32_t nodes[] = {outputs.index()...};
    detail::check(tether_graph_set_outputs(h_.get(), nodes, sizeof...(Out)));
    tether_compile_options o;
    tether_compile_options_init(&o);
    o.channel_capacity = options.channel_capacity;
    o.value_drop = &detail::drop_value;
    tether_compiled c{0};
    detail::check(tether_graph_compile(h_.get(), &o, &c));
    return detail::GraphAccess::compiled<In, Out...>(c);
  }

  // error: why the last compile failed; nullopt if it succeeded or none ran.
  [[nodiscard]] std::optional<Error> error() const {
    need();
    tether_error e{0};
    detail::check(tether_graph_error(h_.get(), &e));
    if (e.id == 0) return std::nullopt;
    return Error::adopt(e);
  }

  [[nodiscard]] tether_graph c_handle() const noexcept { return h_.get(); }

 private:
  void need() const { detail::require(h_.get().id, "tether::Graph"); }

  template <class S, class F, class... Ts>
  auto add_impl(const Actor<S>& actor, const char* group, F&& fn, Node<Ts>... inputs) {
    need();
    detail::require(actor.c_handle().id, "tether::Actor");
    using D = std::decay_t<F>;
    using R = detail::call_result_t<D&, S, const Ts...>;
    static_assert(!std::is_void_v<R>, "tether::Graph: a node returns a value");
    uint32_t index = 0;
    detail::check(tether_graph_add_node(h_.get(), actor.c_handle(), group, &detail::node_trampoline<S, D, Ts...>,
                                        detail::box(std::forward<F>(fn)), &detail::drop_as<detail::Box<D>>,
                                        &index));
    (detail::check(tether_graph_add_edge(h_.get(), inputs.index(), index)), ...);  // in order
    return detail::GraphAccess::node<R>(index);
  }

  detail::UniqueHandle<tether_graph, &tether_graph_release> h_;
};

}  // namespace tether

#endif  // TETHER_HPP_GRAPH_HPP
