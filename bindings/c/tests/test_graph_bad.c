/*
 * test_graph_bad.c — what every bad graph and every bad call of section 9 gets: a status,
 * a message, each arg dropped once, nothing installed.
 */
#define _GNU_SOURCE
#include "graph_fixtures.h"

/* compile_refused: compiling g fails with code, says `part`, and installs nothing. */
static void compile_refused(tether_graph g, int32_t code, const char *part) {
  tether_compiled c = {55};
  CHECK_ST(tether_graph_compile(g, NULL, &c), code);
  CHECK_EQ(c.id, 0);
  CHECK_GRAPH_ERROR(g, code, part);
}

/* Shapes compile refuses: no nodes, no outputs, a node without inputs (unreachable), a
 * cycle, a self-edge. */
TEST(graph_bad_shapes) {
  worker w;
  stage s[4];
  tether_actor a;
  tether_graph g = {0};
  uint32_t n[4], out;
  int i;
  worker_init(&w, 0);
  for (i = 0; i < 4; ++i) stage_init(&s[i], "s", 1, 0, 0);
  a = start_worker("shapes", &w, NULL, 0);

  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  compile_refused(g, TETHER_E_INVALID_ARGUMENT, "no nodes");
  n[0] = add_stage(g, a, NULL, &s[0]);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n[0]), TETHER_OK);
  compile_refused(g, TETHER_E_INVALID_ARGUMENT, "no outputs");
  n[1] = add_stage(g, a, NULL, &s[1]);
  out = n[1];
  CHECK_ST(tether_graph_set_outputs(g, &out, 1), TETHER_OK);
  compile_refused(g, TETHER_E_INVALID_ARGUMENT, "node 1 has no inputs: it is not reachable from the input");
  /* n2 <-> n1 with n0 -> n1: a cycle through node 1 and node 2 */
  n[2] = add_stage(g, a, NULL, &s[2]);
  CHECK_ST(tether_graph_add_edge(g, n[0], n[1]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, n[1], n[2]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, n[2], n[1]), TETHER_OK);
  compile_refused(g, TETHER_E_INVALID_ARGUMENT, "the graph has a cycle through node");
  CHECK_ST(tether_graph_release(g), TETHER_OK);

  CHECK_ST(tether_graph_create(&g), TETHER_OK); /* a self-edge is a cycle too */
  n[3] = add_stage(g, a, NULL, &s[3]);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n[3]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, n[3], n[3]), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(g, &n[3], 1), TETHER_OK);
  compile_refused(g, TETHER_E_INVALID_ARGUMENT, "cycle through node 0");
  CHECK_ST(tether_graph_release(g), TETHER_OK);

  /* Nothing was installed: the thread takes a graph at once. */
  {
    stage ok;
    tether_compiled c = {0};
    uint32_t only;
    stage_init(&ok, "ok", 1, 0, 0);
    CHECK_ST(tether_graph_create(&g), TETHER_OK);
    only = add_stage(g, a, NULL, &ok);
    CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, only), TETHER_OK);
    CHECK_ST(tether_graph_set_outputs(g, &only, 1), TETHER_OK);
    CHECK_ST(tether_graph_compile(g, NULL, &c), TETHER_OK);
    CHECK_ST(tether_compiled_release(c), TETHER_OK);
    CHECK_ST(tether_graph_release(g), TETHER_OK);
    CHECK_EQ(counter_get(&ok.drops), 1);
    stage_destroy(&ok);
  }
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  for (i = 0; i < 4; ++i) {
    CHECK_EQ(counter_get(&s[i].drops), 1);
    stage_destroy(&s[i]);
  }
  worker_destroy(&w);
}

/* A compiled graph's description is frozen until the compiled graph is released. */
TEST(graph_edit_after_compile) {
  worker w;
  stage s, extra;
  tether_actor a;
  tether_graph g = {0};
  tether_compiled c = {0};
  uint32_t n, m = 99;
  worker_init(&w, 0);
  stage_init(&s, "s", 1, 0, 0);
  stage_init(&extra, "x", 1, 0, 0);
  a = start_worker("frozen", &w, NULL, 0);
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  n = add_stage(g, a, NULL, &s);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_OK);
  CHECK_ST(tether_graph_compile(g, NULL, &c), TETHER_OK);
  CHECK_DROPPED_ONCE(tether_graph_add_node(g, a, NULL, stage_fn, &extra, count_drop, &m), TETHER_E_WRONG_STATE,
                     &extra.drops);
  CHECK_EQ(m, 99);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_E_WRONG_STATE);
  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  /* Released: editable (and compilable) again. */
  m = add_stage(g, a, NULL, &extra);
  CHECK_EQ(m, 1);
  CHECK_ST(tether_graph_add_edge(g, n, m), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(g, &m, 1), TETHER_OK);
  CHECK_ST(tether_graph_compile(g, NULL, &c), TETHER_OK);
  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&s.drops), 1);
  CHECK_EQ(counter_get(&extra.drops), 2);
  stage_destroy(&s);
  stage_destroy(&extra);
  worker_destroy(&w);
}

/* Every graph call with a bad handle or argument: its status, the arg dropped once. */
TEST(graph_bad_calls) {
  worker w;
  stage s;
  counter drops;
  tether_actor a;
  tether_graph g = {0}, gone = {0}, null_graph = {0};
  tether_compiled c = {0}, null_compiled = {0};
  tether_future f = {0};
  tether_compile_options o;
  tether_error e = {0};
  uint32_t n, node = 0, twice[2], far = 5;
  void *outs[2] = {0};
  tether_actor wrong_kind;
  worker_init(&w, 0);
  stage_init(&s, "s", 1, 0, 0);
  counter_init(&drops);
  a = start_worker("bad", &w, NULL, 0);
  wrong_kind.id = a.id ^ 1;

  CHECK_ST(tether_graph_create(NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  CHECK_ST(tether_graph_create(&gone), TETHER_OK);
  CHECK_ST(tether_graph_release(gone), TETHER_OK);
  CHECK_ST(tether_graph_release(gone), TETHER_E_INVALID_HANDLE);

  /* add_node: each refusal drops the arg once. */
  CHECK_DROPPED_ONCE(tether_graph_add_node(null_graph, a, NULL, stage_fn, &drops, count_drop, &node),
                     TETHER_E_INVALID_HANDLE, &drops);
  CHECK_DROPPED_ONCE(tether_graph_add_node(gone, a, NULL, stage_fn, &drops, count_drop, &node),
                     TETHER_E_INVALID_HANDLE, &drops);
  CHECK_DROPPED_ONCE(tether_graph_add_node(g, wrong_kind, NULL, stage_fn, &drops, count_drop, &node),
                     TETHER_E_INVALID_HANDLE, &drops);
  CHECK_DROPPED_ONCE(tether_graph_add_node(g, a, NULL, NULL, &drops, count_drop, &node),
                     TETHER_E_INVALID_ARGUMENT, &drops);
  CHECK_DROPPED_ONCE(tether_graph_add_node(g, a, NULL, stage_fn, &drops, count_drop, NULL),
                     TETHER_E_INVALID_ARGUMENT, &drops);
  CHECK_DROPPED_ONCE(tether_graph_add_node(g, a, "nope", stage_fn, &drops, count_drop, &node),
                     TETHER_E_NOT_FOUND, &drops);
  n = add_stage(g, a, NULL, &s);
  CHECK_EQ(n, 0); /* the refused nodes took no index */

  /* add_edge and set_outputs */
  CHECK_ST(tether_graph_add_edge(null_graph, TETHER_GRAPH_INPUT, n), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, 1), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_add_edge(g, 1, n), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(null_graph, &n, 1), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_graph_set_outputs(g, NULL, 1), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_set_outputs(g, &n, 0), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_set_outputs(g, &far, 1), TETHER_E_INVALID_ARGUMENT);
  twice[0] = twice[1] = n;
  CHECK_ST(tether_graph_set_outputs(g, twice, 2), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_OK);

  /* graph_error, compile */
  CHECK_ST(tether_graph_error(g, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_error(null_graph, &e), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_graph_error(g, &e), TETHER_OK);
  CHECK_EQ(e.id, 0); /* no compile yet */
  CHECK_ST(tether_graph_compile(g, NULL, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_graph_compile(null_graph, NULL, &c), TETHER_E_INVALID_HANDLE);
  o = compile_opts(0, NULL);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_E_INVALID_ARGUMENT);
  CHECK_GRAPH_ERROR(g, TETHER_E_INVALID_ARGUMENT, "channel_capacity is 0");
  o = compile_opts((size_t)1 << 21, NULL);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_E_INVALID_ARGUMENT);
  o = compile_opts(1, NULL);
  o.struct_size = (uint32_t)sizeof o + 8;
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_E_INVALID_ARGUMENT);
  tether_compile_options_init(NULL); /* does nothing */
  o = compile_opts(1, NULL);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_OK);

  /* execute: the input is dropped once on every refusal. */
  CHECK_DROPPED_ONCE(tether_compiled_execute(c, &drops, count_drop, NULL), TETHER_E_INVALID_ARGUMENT, &drops);
  CHECK_DROPPED_ONCE(tether_compiled_execute(null_compiled, &drops, count_drop, &f), TETHER_E_INVALID_HANDLE,
                     &drops);
  CHECK_EQ(f.id, 0);
  CHECK_DROPPED_ONCE(tether_compiled_execute_timeout(null_compiled, &drops, count_drop, &f, T_SHORT),
                     TETHER_E_INVALID_HANDLE, &drops);

  /* future_outputs: NULL outs, too small, not done, not an execution's future */
  s.gate_on = 1;
  f = execute_long(c, 1);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_ST(tether_future_outputs(f, NULL, 1), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_outputs(f, outs, 1), TETHER_E_WRONG_STATE); /* not done */
  /* Capacity 1 with one execution in flight: QUEUE_FULL, or TIMEOUT after waiting. */
  {
    tether_future more = {0};
    CHECK_DROPPED_ONCE(tether_compiled_execute(c, &drops, count_drop, &more), TETHER_E_QUEUE_FULL, &drops);
    CHECK_DROPPED_ONCE(tether_compiled_execute_timeout(c, &drops, count_drop, &more, T_SHORT), TETHER_E_TIMEOUT,
                       &drops);
    CHECK_EQ(more.id, 0);
  }
  event_set(&s.gate);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_outputs(f, outs, 0), TETHER_E_INVALID_ARGUMENT);
  CHECK_ST(tether_future_outputs(f, outs, 1), TETHER_OK);
  CHECK_EQ(*(long *)outs[0], 1);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  {
    tether_future call = {0};
    logs_call logs;
    CHECK_ST(tether_actor_call(a, NULL, get_logs, &logs, NULL, &call), TETHER_OK);
    CHECK_EQ(future_outcome(call), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_outputs(call, outs, 1), TETHER_E_WRONG_STATE);
    CHECK_ST(tether_future_release(call), TETHER_OK);
  }

  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  CHECK_ST(tether_compiled_release(c), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_compiled_release_nowait(c), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_compiled_release(null_compiled), TETHER_E_INVALID_HANDLE);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&s.drops), 1);
  counter_destroy(&drops);
  stage_destroy(&s);
  worker_destroy(&w);
}

/* An execute waiting for room returns TETHER_E_INVALID_HANDLE when another thread releases
 * the compiled graph meanwhile. */
typedef struct room_waiter {
  tether_compiled c;
  counter drops;
  event waiting;
  counter status;
} room_waiter;

static void *wait_for_room(void *arg) {
  room_waiter *r = (room_waiter *)arg;
  tether_future f = {0};
  event_set(&r->waiting);
  counter_set(&r->status, tether_compiled_execute_timeout(r->c, &r->drops, count_drop, &f, T_LONG));
  return NULL;
}

TEST(graph_release_wakes_execute) {
  worker w;
  stage s;
  tether_actor a;
  tether_graph g;
  tether_future f;
  room_waiter r;
  pthread_t th;
  tether_compile_options o = compile_opts(1, NULL);
  worker_init(&w, 0);
  stage_init(&s, "s", 1, 0, 0);
  counter_init(&r.drops);
  event_init(&r.waiting);
  counter_init(&r.status);
  counter_set(&r.status, -1);
  a = start_worker("wake", &w, NULL, 0);
  s.gate_on = 3;
  {
    uint32_t n;
    CHECK_ST(tether_graph_create(&g), TETHER_OK);
    n = add_stage(g, a, NULL, &s);
    CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_OK);
    CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_OK);
    CHECK_ST(tether_graph_compile(g, &o, &r.c), TETHER_OK);
  }
  f = execute_long(r.c, 3);
  CHECK(event_wait(&s.started, T_LONG));
  CHECK_EQ(pthread_create(&th, NULL, wait_for_room, &r), 0);
  CHECK(event_wait(&r.waiting, T_LONG));
  /* The waiter may not be asleep yet: then its execute finds the handle gone. Both answer
   * INVALID_HANDLE. */
  CHECK_ST(tether_compiled_release(r.c), TETHER_OK);
  CHECK(counter_wait(&r.status, 0, T_LONG));
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_ST(counter_get(&r.status), TETHER_E_INVALID_HANDLE);
  CHECK_EQ(counter_get(&r.drops), 1);
  CHECK_EQ(future_outcome(f), TETHER_CANCELLED);
  event_set(&s.gate);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&s.drops), 1);
  stage_destroy(&s);
  worker_destroy(&w);
  counter_destroy(&r.drops);
  event_destroy(&r.waiting);
  counter_destroy(&r.status);
}

/* Actors that cannot take a graph: a dead one (its constructor failed) and a stopped one. */
static tether_status failing_ctor(tether_task *t, void *arg, void **state_out) {
  (void)arg;
  (void)state_out;
  return tether_task_fail(t, 5, "no device");
}

TEST(graph_dead_or_stopped_actor) {
  worker w;
  stage s1, s2;
  tether_actor dead = {0}, stopped;
  tether_actor_options o = actor_opts("dead", NULL, 0);
  tether_graph g1, g2;
  worker_init(&w, 0);
  stage_init(&s1, "s", 1, 0, 0);
  stage_init(&s2, "s", 1, 0, 0);
  CHECK_ST(tether_actor_create(&o, failing_ctor, NULL, NULL, NULL, &dead), TETHER_OK);
  CHECK_SOON(actor_state(dead) == TETHER_ACTOR_DEAD);
  g1 = one_node_graph(dead, NULL, &s1);
  compile_refused(g1, TETHER_E_ACTOR_DEAD, "is dead");
  stopped = start_worker("stopped", &w, NULL, 0);
  CHECK_ST(tether_actor_stop(stopped, TETHER_STOP_DRAIN, T_LONG), TETHER_OK);
  g2 = one_node_graph(stopped, NULL, &s2);
  compile_refused(g2, TETHER_E_SHUTDOWN, "is stopping or stopped");
  CHECK_ST(tether_graph_release(g1), TETHER_OK);
  CHECK_ST(tether_graph_release(g2), TETHER_OK);
  CHECK_ST(tether_actor_release(dead), TETHER_OK);
  CHECK_ST(tether_actor_release(stopped), TETHER_OK);
  CHECK_EQ(counter_get(&s1.drops), 1);
  CHECK_EQ(counter_get(&s2.drops), 1);
  stage_destroy(&s1);
  stage_destroy(&s2);
  worker_destroy(&w);
}
