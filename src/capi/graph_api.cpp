// tether_graph_* and tether_compiled_*: compiled graphs (section 9).
#include "capi/boundary.h"
#include "core/actor.h"
#include "core/compiled_graph.h"
#include "core/graph.h"

using namespace tether;
using namespace tether::capi;

namespace {

constexpr size_t kMaxChannelCapacity = size_t{1} << 20;
constexpr size_t kCompileOptionsV1 = offsetof(tether_compile_options, value_drop) + sizeof(tether_drop_fn);


CompiledGraph::Options read_compile_options(const tether_compile_options* o) {
  const tether_compile_options in =
      read_options(o, &tether_compile_options_init, kCompileOptionsV1, "tether_compile_options");
  if (in.channel_capacity == 0 || in.channel_capacity > kMaxChannelCapacity) {
    fail(TETHER_E_INVALID_ARGUMENT, "tether_compile_options.channel_capacity is " +
                                        std::to_string(in.channel_capacity) + "; it must be 1 to " +
                                        std::to_string(kMaxChannelCapacity));
  }
  return CompiledGraph::Options{in.channel_capacity, in.value_drop};
}

tether_status execute(tether_compiled c, UserArg& input, tether_future* out, int64_t timeout_ns) {
  if (out != nullptr) *out = tether_future{0};
  auto compiled = lookup(c);
  require(out, "out");
  *out = future_handle(compiled->execute(std::move(input), Deadline::after(timeout_ns)));
  return TETHER_OK;
}

tether_status release(tether_compiled c) {
  return guarded([&] {
    take(c)->tear_down();
    return TETHER_OK;
  });
}

}  // namespace

extern "C" {

TETHER_API tether_status tether_graph_create(tether_graph* out) {
  if (out != nullptr) *out = tether_graph{0};
  return guarded([&] {
    require(out, "out");
    *out = make_handle<tether_graph>(std::make_shared<Graph>());
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_graph_add_node(tether_graph g, tether_actor a, const char* group, tether_node_fn fn,
                                               void* arg, tether_drop_fn arg_drop, uint32_t* node) {
  return guarded_adopting(arg, arg_drop, [&](UserArg& owned) {
    auto graph = lookup(g);
    auto actor = lookup(a);
    require(fn, "fn");
    require(node, "node");
    *node = graph->add_node(std::move(actor), group, fn, std::move(owned));
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_graph_add_edge(tether_graph g, uint32_t from, uint32_t to) {
  return guarded([&] {
    lookup(g)->add_edge(from, to);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_graph_set_outputs(tether_graph g, const uint32_t* nodes, size_t n) {
  return guarded([&] {
    auto graph = lookup(g);
    require(nodes, "nodes");
    if (n == 0) fail(TETHER_E_INVALID_ARGUMENT, "a graph needs at least one output (n is 0)");
    graph->set_outputs(nodes, n);
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_graph_error(tether_graph g, tether_error* out) {
  return read_out(g, out, "out", [](const Graph& graph) { return error_handle(graph.last_error()); });
}

TETHER_API tether_status tether_graph_release(tether_graph g) {
  return guarded([&] {
    (void)take(g);
    return TETHER_OK;
  });
}

TETHER_API void tether_compile_options_init(tether_compile_options* o) {
  if (o == nullptr) return;
  *o = tether_compile_options{};
  o->struct_size = sizeof(tether_compile_options);
  o->channel_capacity = 8;
}

TETHER_API tether_status tether_graph_compile(tether_graph g, const tether_compile_options* o, tether_compiled* out) {
  if (out != nullptr) *out = tether_compiled{0};
  return guarded([&] {
    auto graph = lookup(g);
    require(out, "out");
    // Every failure of a compile, its options' and a plan's out of memory included, is
    // recorded on the graph for tether_graph_error (here, the one place that does).
    try {
      out->id = CompiledGraph::compile(graph, read_compile_options(o), &publish<tether_compiled>);
    } catch (const StatusError& e) {
      graph->record_failure(error_or_out_of_memory(e.code(), e.what()));
      throw;
    } catch (const std::bad_alloc&) {
      graph->record_failure(out_of_memory_error());
      throw;
    }
    return TETHER_OK;
  });
}

TETHER_API tether_status tether_compiled_execute(tether_compiled c, void* input, tether_drop_fn input_drop,
                                                 tether_future* out) {
  return guarded_adopting(input, input_drop, [&](UserArg& owned) { return execute(c, owned, out, 0); });
}

TETHER_API tether_status tether_compiled_execute_timeout(tether_compiled c, void* input, tether_drop_fn input_drop,
                                                         tether_future* out, int64_t timeout_ns) {
  return guarded_adopting(input, input_drop, [&](UserArg& owned) { return execute(c, owned, out, timeout_ns); });
}

TETHER_API tether_status tether_compiled_release(tether_compiled c) { return release(c); }

TETHER_API tether_status tether_compiled_release_nowait(tether_compiled c) { return release(c); }

}  // extern "C"
