/*
 * test_graph.c — compiled graphs (section 9): the pipeline of the seed issue, thread
 * pinning, busy threads, groups, fan-out/fan-in, failures, teardown and backpressure.
 */
#define _GNU_SOURCE
#include "graph_fixtures.h"

/* The seed's pipeline: two workers, forward passes then backward passes.
 * input -> w0.fwd (x2) -> w1.fwd (+3) -> w1.bwd (x5) -> w0.bwd (-1) -> output */
typedef struct pipeline {
  worker w[2];
  tether_actor a[2];
  stage fwd0, fwd1, bwd1, bwd0;
  tether_graph g;
  tether_compiled c;
} pipeline;

static long pipeline_expect(long b) { return ((b * 2) + 3) * 5 - 1; }

/* CHECK_LOG: the entries of log whose tag is `tag`, in order, are `want`. */
static void log_entries(const char *log, const char *tag, char *out, size_t cap) {
  const size_t tag_len = strlen(tag);
  const char *at = log;
  size_t used = 0;
  out[0] = '\0';
  while (*at != '\0') {
    const char *end = strchr(at, ' ');
    size_t len = end ? (size_t)(end - at) : strlen(at);
    if (len > tag_len && strncmp(at, tag, tag_len) == 0 && at[tag_len] == ':' && used + len + 2 < cap) {
      if (used > 0) out[used++] = ' ';
      memcpy(out + used, at, len);
      used += len;
      out[used] = '\0';
    }
    at += len;
    while (*at == ' ') ++at;
  }
}
#define CHECK_LOG(log, tag, want)                                                            \
  do {                                                                                       \
    char got_[512];                                                                          \
    log_entries((log), (tag), got_, sizeof got_);                                            \
    CHECK_STR(got_, (want));                                                                 \
  } while (0)

static void pipeline_start(pipeline *p, int heap) {
  uint32_t n[4], out;
  tether_compile_options o = compile_opts(8, heap ? value_drop : NULL);
  worker_init(&p->w[0], 0);
  worker_init(&p->w[1], 1);
  p->a[0] = start_worker("worker-0", &p->w[0], NULL, 0);
  p->a[1] = start_worker("worker-1", &p->w[1], NULL, 0);
  /* Both constructors have run (their args go once they return): a stop CANCEL that follows
   * cannot cancel one still queued, so each destructor runs once at the end. */
  CHECK(counter_wait(&p->w[0].drops, 1, T_LONG) && counter_wait(&p->w[1].drops, 1, T_LONG));
  stage_init(&p->fwd0, "fwd", 2, 0, heap);
  stage_init(&p->fwd1, "fwd", 1, 3, heap);
  stage_init(&p->bwd1, "bwd", 5, 0, heap);
  stage_init(&p->bwd0, "bwd", 1, -1, heap);
  CHECK_ST(tether_graph_create(&p->g), TETHER_OK);
  n[0] = add_stage(p->g, p->a[0], NULL, &p->fwd0);
  n[1] = add_stage(p->g, p->a[1], NULL, &p->fwd1);
  n[2] = add_stage(p->g, p->a[1], NULL, &p->bwd1);
  n[3] = add_stage(p->g, p->a[0], NULL, &p->bwd0);
  CHECK_EQ(n[0], 0);
  CHECK_EQ(n[3], 3);
  CHECK_ST(tether_graph_add_edge(p->g, TETHER_GRAPH_INPUT, n[0]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(p->g, n[0], n[1]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(p->g, n[1], n[2]), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(p->g, n[2], n[3]), TETHER_OK);
  out = n[3];
  CHECK_ST(tether_graph_set_outputs(p->g, &out, 1), TETHER_OK);
  CHECK_ST(tether_graph_compile(p->g, &o, &p->c), TETHER_OK);
}

/* pipeline_end: releases everything and checks every arg was dropped once. */
static void pipeline_end(pipeline *p) {
  int i;
  CHECK_ST(tether_compiled_release(p->c), TETHER_OK);
  CHECK_ST(tether_graph_release(p->g), TETHER_OK);
  for (i = 0; i < 2; ++i) CHECK_ST(tether_actor_release(p->a[i]), TETHER_OK);
  /* The node args go with the graph and the last step; the actors' with their constructors. */
  CHECK(counter_wait(&p->fwd0.drops, 1, T_LONG) && counter_wait(&p->fwd1.drops, 1, T_LONG));
  CHECK(counter_wait(&p->bwd1.drops, 1, T_LONG) && counter_wait(&p->bwd0.drops, 1, T_LONG));
  CHECK_EQ(counter_get(&p->fwd0.drops) + counter_get(&p->bwd0.drops), 2);
  for (i = 0; i < 2; ++i) {
    CHECK_EQ(counter_get(&p->w[i].drops), 1);
    CHECK_EQ(counter_get(&p->w[i].dtor_runs), 1);
    worker_destroy(&p->w[i]);
  }
  stage_destroy(&p->fwd0);
  stage_destroy(&p->fwd1);
  stage_destroy(&p->bwd1);
  stage_destroy(&p->bwd0);
}

TEST(graph_pipeline_seed) {
  pipeline p;
  tether_future f[3], call = {0};
  logs_call logs;
  long b;
  counter_init(&g_value_drops);
  pipeline_start(&p, /*heap=*/1);
  for (b = 0; b < 3; ++b) f[b] = execute_long(p.c, b);
  for (b = 0; b < 3; ++b) {
    CHECK_EQ(output_long(f[b], 0, 1, /*owned=*/1), pipeline_expect(b));
    CHECK_ST(tether_future_release(f[b]), TETHER_OK);
  }
  /* The call that hung in Ray: an ordinary call to worker 0 with the graph still compiled. */
  CHECK_ST(tether_actor_call(p.a[0], NULL, get_logs, &logs, NULL, &call), TETHER_OK);
  CHECK_EQ(future_outcome(call), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(call), TETHER_OK);
  /* Each worker ran its forward passes, and its backward passes, in batch order (how the
   * two interleave depends on the pipelining). */
  CHECK_LOG(logs.text, "fwd", "fwd:0 fwd:1 fwd:2");
  CHECK_LOG(logs.text, "bwd", "bwd:15 bwd:25 bwd:35");
  CHECK_EQ(logs.tid, p.w[0].tid);
  CHECK_ST(tether_actor_call(p.a[1], NULL, get_logs, &logs, NULL, &call), TETHER_OK);
  CHECK_EQ(future_outcome(call), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(call), TETHER_OK);
  CHECK_LOG(logs.text, "fwd", "fwd:0 fwd:2 fwd:4");
  CHECK_LOG(logs.text, "bwd", "bwd:3 bwd:5 bwd:7");
  /* Three intermediate values per execution were dropped; the outputs were taken. */
  CHECK_EQ(counter_get(&g_value_drops), 9);
  pipeline_end(&p);
}

/* The loop does not own its thread: while worker 1's node is blocked, worker 0 — which
 * hosts the execution's next step — still answers ordinary calls, and worker 1's state
 * answers too. */
TEST(graph_ordinary_calls_between_steps) {
  pipeline p;
  tether_future f, call = {0};
  logs_call logs;
  int32_t state = 0;
  pipeline_start(&p, /*heap=*/0);
  p.fwd1.gate_on = 14; /* fwd1 sees fwd0's output: 7 * 2 */
  f = execute_long(p.c, 7);
  CHECK(event_wait(&p.fwd1.started, T_LONG));
  CHECK_ST(tether_actor_call(p.a[0], NULL, get_logs, &logs, NULL, &call), TETHER_OK);
  CHECK_EQ(future_outcome(call), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(call), TETHER_OK);
  CHECK_STR(logs.text, "fwd:7");
  CHECK_ST(tether_actor_state(p.a[1], &state, NULL), TETHER_OK);
  CHECK_EQ(state, TETHER_ACTOR_ALIVE);
  CHECK_EQ(future_poll(f), TETHER_PENDING);
  event_set(&p.fwd1.gate);
  CHECK_EQ(output_long(f, 0, 1, 0), pipeline_expect(7));
  CHECK_ST(tether_future_release(f), TETHER_OK);
  pipeline_end(&p);
}

/* Every node runs on the thread where its actor's constructor ran (stage_fn checks the
 * thread id and the constructor's thread-local, and fails the execution otherwise). */
TEST(graph_nodes_on_constructor_thread) {
  worker w;
  stage s;
  tether_actor a;
  tether_graph g = {0};
  tether_compiled c = {0};
  tether_future f;
  uint32_t n;
  tether_compile_options o = compile_opts(2, NULL);
  long i;
  worker_init(&w, 3);
  stage_init(&s, "n", 1, 1, 0);
  a = start_worker("pinned", &w, NULL, 0);
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  n = add_stage(g, a, NULL, &s);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, n), TETHER_OK);
  CHECK_ST(tether_graph_set_outputs(g, &n, 1), TETHER_OK);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_OK);
  for (i = 0; i < 20; ++i) {
    f = execute_long(c, i);
    CHECK_EQ(output_long(f, 0, 1, 0), i + 1);
    CHECK_ST(tether_future_release(f), TETHER_OK);
  }
  CHECK_EQ(counter_get(&s.runs), 20);
  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  CHECK_EQ(counter_get(&s.drops), 1);
  stage_destroy(&s);
  worker_destroy(&w);
}

/* A thread hosts one compiled graph: a second graph on it is THREAD_BUSY (naming the
 * thread, installing nothing), and compiles once the first is released. Two actors on one
 * shared executor share its thread, so they are busy together. */
TEST(graph_thread_busy) {
  worker w0, w1, w2;
  stage s0, s1, s2;
  tether_actor a0, a1, a2;
  tether_executor shared = {0};
  tether_executor_options eo = exec_opts("shared");
  tether_actor_options ao = actor_opts("on-shared", NULL, 0);
  tether_graph g0, g1, g2;
  tether_compiled c0 = {0}, c1 = {0}, c2 = {0};
  tether_future f;
  worker_init(&w0, 0);
  worker_init(&w1, 1);
  worker_init(&w2, 2);
  stage_init(&s0, "a", 1, 0, 0);
  stage_init(&s1, "b", 1, 0, 0);
  stage_init(&s2, "c", 1, 0, 0);
  a0 = start_worker("busy", &w0, NULL, 0);
  g0 = one_node_graph(a0, NULL, &s0);
  g1 = one_node_graph(a0, NULL, &s1);
  CHECK_ST(tether_graph_compile(g0, NULL, &c0), TETHER_OK);
  CHECK_ST(tether_graph_compile(g1, NULL, &c1), TETHER_E_THREAD_BUSY);
  CHECK_EQ(c1.id, 0);
  CHECK_GRAPH_ERROR(g1, TETHER_E_THREAD_BUSY, "thread 'busy'");
  /* The first graph still works, and nothing of the second was installed. */
  f = execute_long(c0, 5);
  CHECK_EQ(output_long(f, 0, 1, 0), 5);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_compiled_release(c0), TETHER_OK);
  CHECK_ST(tether_graph_compile(g1, NULL, &c1), TETHER_OK);
  f = execute_long(c1, 6);
  CHECK_EQ(output_long(f, 0, 1, 0), 6);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  CHECK_ST(tether_compiled_release(c1), TETHER_OK);

  /* Two actors on one executor: one OS thread, so one graph between them. */
  CHECK_ST(tether_executor_create(&eo, &shared), TETHER_OK);
  ao.executor = shared;
  CHECK_ST(tether_actor_create(&ao, worker_ctor, worker_dtor, &w1, count_drop, &a1), TETHER_OK);
  CHECK_ST(tether_actor_create(&ao, worker_ctor, worker_dtor, &w2, count_drop, &a2), TETHER_OK);
  CHECK_ST(tether_graph_release(g0), TETHER_OK);
  g0 = one_node_graph(a1, NULL, &s0);
  g2 = one_node_graph(a2, NULL, &s2);
  CHECK_ST(tether_graph_compile(g0, NULL, &c0), TETHER_OK);
  CHECK_ST(tether_graph_compile(g2, NULL, &c2), TETHER_E_THREAD_BUSY);
  CHECK_GRAPH_ERROR(g2, TETHER_E_THREAD_BUSY, "thread 'shared'");
  CHECK_ST(tether_compiled_release(c0), TETHER_OK);
  CHECK_ST(tether_graph_compile(g2, NULL, &c2), TETHER_OK);
  {  /* a successful compile clears the graph's error */
    tether_error e = {9};
    CHECK_ST(tether_graph_error(g2, &e), TETHER_OK);
    CHECK_EQ(e.id, 0);
  }
  CHECK_ST(tether_compiled_release(c2), TETHER_OK);

  CHECK_ST(tether_graph_release(g0), TETHER_OK);
  CHECK_ST(tether_graph_release(g1), TETHER_OK);
  CHECK_ST(tether_graph_release(g2), TETHER_OK);
  CHECK_ST(tether_actor_release(a0), TETHER_OK);
  CHECK_ST(tether_actor_release(a1), TETHER_OK);
  CHECK_ST(tether_actor_release(a2), TETHER_OK);
  CHECK_ST(tether_executor_release(shared), TETHER_OK);
  CHECK_EQ(counter_get(&s0.drops), 2); /* s0 was the arg of two graphs */
  CHECK_EQ(counter_get(&s1.drops), 1);
  CHECK_EQ(counter_get(&s2.drops), 1);
  stage_destroy(&s0);
  stage_destroy(&s1);
  stage_destroy(&s2);
  worker_destroy(&w0);
  worker_destroy(&w1);
  worker_destroy(&w2);
}

/* A graph on a named single-thread group coexists with a graph on the same actor's
 * default thread; a group of several threads is refused. */
TEST(graph_groups) {
  worker w;
  stage s_default, s_group, s_wide;
  tether_group_spec groups[2] = {{"io", 1}, {"wide", 2}};
  tether_actor a;
  tether_graph g_default, g_group, g_wide;
  tether_compiled c_default = {0}, c_group = {0}, c_wide = {0};
  tether_future f1, f2, init = {0};
  worker_init(&w, 4);
  stage_init(&s_default, "d", 1, 10, 0);
  stage_init(&s_group, "g", 1, 20, 0);
  stage_init(&s_wide, "w", 1, 30, 0);
  a = start_worker("grouped", &w, groups, 2);
  g_default = one_node_graph(a, NULL, &s_default);
  g_group = one_node_graph(a, "io", &s_group);
  g_wide = one_node_graph(a, "wide", &s_wide);
  CHECK_ST(tether_graph_compile(g_wide, NULL, &c_wide), TETHER_E_INVALID_ARGUMENT);
  CHECK_GRAPH_ERROR(g_wide, TETHER_E_INVALID_ARGUMENT, "group 'wide' of 2 threads");
  CHECK_ST(tether_graph_compile(g_default, NULL, &c_default), TETHER_OK);
  CHECK_ST(tether_graph_compile(g_group, NULL, &c_group), TETHER_OK);
  /* The group's node must run on the group's thread and see that thread's own tl_value. */
  {
    long mark = 555;
    CHECK_ST(tether_actor_call(a, "io", mark_thread, &mark, NULL, &init), TETHER_OK);
    CHECK_EQ(future_outcome(init), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_release(init), TETHER_OK);
    CHECK(mark != w.tid);
    s_group.want_tid = mark;
    s_group.want_tl = 555;
  }
  f1 = execute_long(c_default, 1);
  f2 = execute_long(c_group, 2);
  CHECK_EQ(output_long(f1, 0, 1, 0), 11);
  CHECK_ST(tether_future_release(f1), TETHER_OK);
  CHECK_EQ(output_long(f2, 0, 1, 0), 22);
  CHECK_ST(tether_future_release(f2), TETHER_OK);
  CHECK_EQ(counter_get(&s_group.runs), 1);
  CHECK_ST(tether_compiled_release(c_default), TETHER_OK);
  CHECK_ST(tether_compiled_release(c_group), TETHER_OK);
  CHECK_ST(tether_graph_release(g_default), TETHER_OK);
  CHECK_ST(tether_graph_release(g_group), TETHER_OK);
  CHECK_ST(tether_graph_release(g_wide), TETHER_OK);
  CHECK_ST(tether_actor_release(a), TETHER_OK);
  stage_destroy(&s_default);
  stage_destroy(&s_group);
  stage_destroy(&s_wide);
  worker_destroy(&w);
}

/* Fan-out and fan-in: the input feeds a and b; c takes (a, b) in edge order; the outputs
 * are c and a, in that order. */
TEST(graph_fan_out_fan_in) {
  worker w0, w1;
  stage sa, sb, sc;
  tether_actor a0, a1;
  tether_graph g = {0};
  tether_compiled c = {0};
  tether_future f;
  uint32_t na, nb, nc, outs[2];
  void *vals[3] = {0, 0, (void *)1};
  tether_compile_options o = compile_opts(4, value_drop);
  long i;
  counter_init(&g_value_drops);
  worker_init(&w0, 0);
  worker_init(&w1, 1);
  stage_init(&sa, "a", 2, 0, 1);  /* a = 2x */
  stage_init(&sb, "b", 3, 0, 1);  /* b = 3x */
  stage_init(&sc, "c", 1, 0, 1);  /* c = a + 1000 b */
  a0 = start_worker("fan-0", &w0, NULL, 0);
  a1 = start_worker("fan-1", &w1, NULL, 0);
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  na = add_stage(g, a0, NULL, &sa);
  nb = add_stage(g, a1, NULL, &sb);
  nc = add_stage(g, a0, NULL, &sc);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, na), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, nb), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, na, nc), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, nb, nc), TETHER_OK);
  outs[0] = nc;
  outs[1] = na;
  CHECK_ST(tether_graph_set_outputs(g, outs, 2), TETHER_OK);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_OK);
  for (i = 1; i <= 10; ++i) {
    f = execute_long(c, i);
    CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
    /* outs may be larger than the outputs: the rest is set to NULL */
    CHECK_ST(tether_future_outputs(f, vals, 3), TETHER_OK);
    CHECK_EQ(*(long *)vals[0], 2 * i + 1000 * 3 * i);
    CHECK_EQ(*(long *)vals[1], 2 * i);
    CHECK(vals[2] == NULL);
    free(vals[0]);
    free(vals[1]);
    /* b's value was dropped by the execution; the outputs were handed over */
    CHECK_EQ(counter_get(&g_value_drops), i);
    CHECK_ST(tether_future_release(f), TETHER_OK);
  }
  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  CHECK_ST(tether_actor_release(a0), TETHER_OK);
  CHECK_ST(tether_actor_release(a1), TETHER_OK);
  CHECK_EQ(counter_get(&sa.drops) + counter_get(&sb.drops) + counter_get(&sc.drops), 3);
  stage_destroy(&sa);
  stage_destroy(&sb);
  stage_destroy(&sc);
  worker_destroy(&w0);
  worker_destroy(&w1);
}

/* A failing node fails only its execution, with its error; the nodes after it do not run
 * for that execution; later executions run. Every value it produced is dropped. */
TEST(graph_node_failure) {
  pipeline p;
  tether_future f[3];
  long b;
  counter_init(&g_value_drops);
  pipeline_start(&p, /*heap=*/1);
  p.fwd1.fail_on = 2; /* batch 1: fwd0 gives 2 */
  for (b = 0; b < 3; ++b) f[b] = execute_long(p.c, b);
  CHECK_EQ(output_long(f[0], 0, 1, 1), pipeline_expect(0));
  CHECK_EQ(future_outcome(f[1]), TETHER_FAILED);
  CHECK_FUTURE_ERROR(f[1], TETHER_E_TASK_FAILED, 7, "bad batch", "worker-1");
  {
    void *out = NULL;
    CHECK_ST(tether_future_outputs(f[1], &out, 1), TETHER_E_WRONG_STATE);
  }
  CHECK_EQ(output_long(f[2], 0, 1, 1), pipeline_expect(2));
  CHECK_EQ(counter_get(&p.bwd1.runs), 2); /* not for batch 1 */
  CHECK_EQ(counter_get(&p.bwd0.runs), 2);
  /* 3 + 3 intermediates of the good batches, and fwd0's value of the failed one. */
  CHECK_EQ(counter_get(&g_value_drops), 7);
  for (b = 0; b < 3; ++b) CHECK_ST(tether_future_release(f[b]), TETHER_OK);
  pipeline_end(&p);
}

/* Release while a node is blocked: it returns at once, the executions not done are
 * CANCELLED, the node sees stop_requested, and the thread is busy until the node returns,
 * then free for another graph. Nothing leaks: values, input and node args are dropped. */
TEST(graph_release_while_node_blocked) {
  pipeline p;
  tether_future f[3];
  tether_graph other;
  tether_compiled c2 = {0};
  stage s2;
  counter input_drops;
  long b;
  counter_init(&g_value_drops);
  counter_init(&input_drops);
  stage_init(&s2, "other", 1, 0, 0);
  pipeline_start(&p, /*heap=*/1);
  p.fwd1.gate_on = 0; /* batch 0 blocks in worker 1's first node */
  for (b = 0; b < 3; ++b) {
    CHECK_ST(tether_compiled_execute(p.c, new_value(b), value_drop, &f[b]), TETHER_OK);
  }
  CHECK(event_wait(&p.fwd1.started, T_LONG));
  CHECK_ST(tether_compiled_release(p.c), TETHER_OK); /* does not wait for the gate */
  for (b = 0; b < 3; ++b) CHECK_EQ(future_outcome(f[b]), TETHER_CANCELLED);
  CHECK_FUTURE_ERROR(f[0], TETHER_E_CANCELLED, 0, NULL, NULL);
  /* worker 1's thread still runs the node: busy; worker 0's is free already. */
  other = one_node_graph(p.a[1], NULL, &s2);
  CHECK_ST(tether_graph_compile(other, NULL, &c2), TETHER_E_THREAD_BUSY);
  event_set(&p.fwd1.gate);
  CHECK_SOON(tether_graph_compile(other, NULL, &c2) == TETHER_OK);
  CHECK_EQ(counter_get(&p.fwd1.saw_stop), 1);
  CHECK_EQ(counter_get(&p.bwd1.runs), 0); /* nothing after the teardown ran */
  CHECK_ST(tether_compiled_release(c2), TETHER_OK);
  CHECK_ST(tether_graph_release(other), TETHER_OK);
  for (b = 0; b < 3; ++b) CHECK_ST(tether_future_release(f[b]), TETHER_OK);
  CHECK_ST(tether_graph_release(p.g), TETHER_OK);
  {
    int i;
    for (i = 0; i < 2; ++i) CHECK_ST(tether_actor_release(p.a[i]), TETHER_OK);
  }
  /* Once the steps drained: every node arg, every input (new_value, dropped by value_drop)
   * and every value a node produced was dropped once. */
  CHECK(counter_wait(&p.fwd0.drops, 1, T_LONG) && counter_wait(&p.fwd1.drops, 1, T_LONG));
  CHECK(counter_wait(&p.bwd0.drops, 1, T_LONG) && counter_wait(&p.bwd1.drops, 1, T_LONG));
  CHECK_SOON(counter_get(&g_value_drops) == counter_get(&g_values_made));
  CHECK(counter_get(&g_values_made) >= 3 + 1 + 1); /* the inputs, fwd0's and fwd1's batch 0 */
  CHECK_EQ(counter_get(&s2.drops), 1);
  stage_destroy(&s2);
  counter_destroy(&input_drops);
}

/* 10,000 executions through a pipeline of capacity 4: never more than 4 in flight, all
 * outputs right, and futures complete in the order the executions started. */
typedef struct order_probe {
  counter next;
  long *order;
} order_probe;

typedef struct done_note {
  order_probe *probe;
  long index;
} done_note;

static void note_done(void *arg) {
  done_note *d = (done_note *)arg;
  pthread_mutex_lock(&d->probe->next.mu);
  d->probe->order[d->index] = d->probe->next.n++;
  pthread_cond_broadcast(&d->probe->next.cv);
  pthread_mutex_unlock(&d->probe->next.mu);
}

/* input_drop of the executions below: counts the inputs the library let go (an execution
 * drops its input before its slot is free, so executed - dropped never exceeds the slots
 * in use). */
static counter g_inputs_dropped;
static void drop_input(void *p) {
  free(p);
  counter_add(&g_inputs_dropped, 1);
}

TEST(graph_many_executions_bounded) {
  const long count = scaled(10000);
  const size_t capacity = 4;
  pipeline p;
  tether_future *f = (tether_future *)calloc((size_t)count, sizeof *f);
  done_note *notes = (done_note *)calloc((size_t)count, sizeof *notes);
  order_probe probe;
  long i, full = 0;
  tether_compile_options o = compile_opts(capacity, value_drop);
  CHECK(f != NULL && notes != NULL);
  counter_init(&g_value_drops);
  counter_init(&g_inputs_dropped);
  counter_init(&probe.next);
  probe.order = (long *)calloc((size_t)count, sizeof(long));
  CHECK(probe.order != NULL);
  pipeline_start(&p, 1);
  /* Recompile with capacity 4 (the graph is editable again once released). */
  CHECK_ST(tether_compiled_release(p.c), TETHER_OK);
  CHECK_ST(tether_graph_compile(p.g, &o, &p.c), TETHER_OK);
  /* With the first execution blocked in its first node, exactly `capacity` get in. */
  p.fwd0.gate_on = 0;
  for (i = 0; i < (long)capacity; ++i) {
    CHECK_ST(tether_compiled_execute(p.c, new_value(i), drop_input, &f[i]), TETHER_OK);
  }
  CHECK(event_wait(&p.fwd0.started, T_LONG));
  {
    counter refused;
    tether_future none = {0};
    counter_init(&refused);
    CHECK_DROPPED_ONCE(tether_compiled_execute(p.c, &refused, count_drop, &none), TETHER_E_QUEUE_FULL, &refused);
    counter_destroy(&refused);
  }
  event_set(&p.fwd0.gate);
  for (i = 0; i < count; ++i) {
    if (i >= (long)capacity) {
      tether_status st = tether_compiled_execute(p.c, new_value(i), drop_input, &f[i]);
      if (st == TETHER_E_QUEUE_FULL) { /* backpressure: then wait for room */
        ++full;
        CHECK_ST(tether_compiled_execute_timeout(p.c, new_value(i), drop_input, &f[i], T_LONG), TETHER_OK);
      } else {
        CHECK_ST(st, TETHER_OK);
      }
    }
    /* executed - (dropped - refused): executions whose input is still held */
    CHECK(i + 1 - (counter_get(&g_inputs_dropped) - full) <= (long)capacity);
    notes[i].probe = &probe;
    notes[i].index = i;
    CHECK_ST(tether_future_on_done(f[i], note_done, &notes[i], NULL), TETHER_OK);
  }
  for (i = 0; i < count; ++i) {
    CHECK_EQ(output_long(f[i], 0, 1, 1), pipeline_expect(i));
    CHECK_ST(tether_future_release(f[i]), TETHER_OK);
  }
  CHECK(counter_wait(&probe.next, count, T_LONG)); /* every notice ran */
  for (i = 0; i < count; ++i) CHECK_EQ(probe.order[i], i);
  CHECK_EQ(counter_get(&g_value_drops), 3 * count);
  CHECK_EQ(counter_get(&g_inputs_dropped), count + full); /* refused ones are dropped too */
  printf("executions %ld, QUEUE_FULL answers %ld\n", count, full);
  pipeline_end(&p);
  free(probe.order);
  free(notes);
  free(f);
  counter_destroy(&probe.next);
}

/* Stopping an actor of the graph fails the executions that still need it with
 * TETHER_E_SHUTDOWN; later executes are refused with it. */
TEST(graph_actor_stopped) {
  pipeline p;
  tether_future f[3], late = {0};
  long b;
  counter input_drops;
  counter_init(&input_drops);
  pipeline_start(&p, 0);
  p.fwd0.gate_on = 0;
  for (b = 0; b < 3; ++b) f[b] = execute_long(p.c, b);
  CHECK(event_wait(&p.fwd0.started, T_LONG));
  CHECK_ST(tether_actor_stop(p.a[1], TETHER_STOP_CANCEL, T_LONG), TETHER_OK);
  event_set(&p.fwd0.gate);
  for (b = 0; b < 3; ++b) {
    CHECK_EQ(future_outcome(f[b]), TETHER_FAILED);
    CHECK_FUTURE_ERROR(f[b], TETHER_E_SHUTDOWN, 0, NULL, NULL);
    CHECK_ST(tether_future_release(f[b]), TETHER_OK);
  }
  CHECK_EQ(counter_get(&p.fwd1.runs), 0);
  CHECK_DROPPED_ONCE(tether_compiled_execute(p.c, &input_drops, count_drop, &late), TETHER_E_SHUTDOWN,
                     &input_drops);
  CHECK_EQ(late.id, 0);
  pipeline_end(&p);
  counter_destroy(&input_drops);
}

/* Values with value_drop: outputs never taken are dropped with the future; without
 * value_drop nothing is ever freed by the library (the ring values stay the node's). */
TEST(graph_outputs_not_taken_dropped_with_future) {
  pipeline p;
  tether_future f;
  counter_init(&g_value_drops);
  pipeline_start(&p, 1);
  f = execute_long(p.c, 4);
  CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
  CHECK_EQ(counter_get(&g_value_drops), 3);
  CHECK_ST(tether_future_release(f), TETHER_OK);
  /* The thread that completed the execution may still hold the future for a moment. */
  CHECK(counter_wait(&g_value_drops, 4, T_LONG));
  /* A second copy of the outputs gives the same pointers, without a second hand-over. */
  f = execute_long(p.c, 5);
  {
    void *a = NULL, *b = NULL;
    CHECK_EQ(future_outcome(f), TETHER_SUCCEEDED);
    CHECK_ST(tether_future_outputs(f, &a, 1), TETHER_OK);
    CHECK_ST(tether_future_outputs(f, &b, 1), TETHER_OK);
    CHECK(a == b);
    CHECK_EQ(*(long *)a, pipeline_expect(5));
    CHECK_ST(tether_future_release(f), TETHER_OK);
    CHECK_EQ(counter_get(&g_value_drops), 7); /* the output was not dropped: it is ours */
    free(a);
  }
  pipeline_end(&p);
}

/* A node may not spawn nested threads (its step ends when it returns), and a thread of the
 * graph that waits on one of its executions waits on itself: TETHER_E_DEADLOCK. */
typedef struct waiter_call {
  tether_future f;
  tether_status waited;
} waiter_call;

static tether_status wait_on_execution(tether_task *t, void *state, void *arg) {
  waiter_call *w = (waiter_call *)arg;
  (void)t;
  (void)state;
  w->waited = tether_future_wait(w->f, T_LONG);
  return TETHER_OK;
}

TEST(graph_node_spawn_and_self_wait) {
  pipeline p;
  tether_future f, call = {0};
  waiter_call w;
  pipeline_start(&p, 0);
  p.fwd0.try_spawn = 1;
  p.fwd1.gate_on = 2; /* batch 1 (fwd0 gives 2) blocks in worker 1 */
  f = execute_long(p.c, 1);
  CHECK(event_wait(&p.fwd1.started, T_LONG));
  CHECK_EQ(counter_get(&p.fwd0.spawn_status), TETHER_E_WRONG_STATE);
  /* worker 0 hosts the execution's last node: waiting there would wait on itself. */
  w.f = f;
  w.waited = -1;
  CHECK_ST(tether_actor_call(p.a[0], NULL, wait_on_execution, &w, NULL, &call), TETHER_OK);
  CHECK_EQ(future_outcome(call), TETHER_SUCCEEDED);
  CHECK_ST(tether_future_release(call), TETHER_OK);
  CHECK_ST(w.waited, TETHER_E_DEADLOCK);
  event_set(&p.fwd1.gate);
  CHECK_EQ(output_long(f, 0, 1, 0), pipeline_expect(1));
  CHECK_ST(tether_future_release(f), TETHER_OK);
  pipeline_end(&p);
}

/* tether_future_cancel on an execution: it is CANCELLED at once, the nodes not yet started
 * never run, the values it made are dropped, and the executions after it go on. */
TEST(graph_execution_cancel) {
  pipeline p;
  tether_future f[2];
  counter_init(&g_value_drops);
  pipeline_start(&p, 1);
  p.fwd1.gate_on = 2; /* execution 0 (input 1; fwd0 gives 2) blocks in worker 1 */
  f[0] = execute_long(p.c, 1);
  CHECK(event_wait(&p.fwd1.started, T_LONG));
  CHECK_ST(tether_future_cancel(f[0]), TETHER_OK);
  CHECK_EQ(future_poll(f[0]), TETHER_CANCELLED); /* at once, the node still blocked */
  f[1] = execute_long(p.c, 2);
  event_set(&p.fwd1.gate);
  CHECK_EQ(output_long(f[1], 0, 1, 1), pipeline_expect(2));
  CHECK_EQ(counter_get(&p.bwd1.runs), 1); /* execution 1's only */
  CHECK_EQ(counter_get(&p.bwd0.runs), 1);
  /* execution 0: fwd0's and fwd1's values; execution 1: its three intermediates */
  CHECK_EQ(counter_get(&g_value_drops), 2 + 3);
  CHECK_ST(tether_future_release(f[0]), TETHER_OK);
  CHECK_ST(tether_future_release(f[1]), TETHER_OK);
  pipeline_end(&p);
}

/* sum_fn: out = add + sum of (i + 1) * inputs[i], for any number of inputs (arg: &add). */
static tether_status sum_fn(tether_task *t, void *state, void *arg, void *const *inputs, size_t n, void **output) {
  long v = *(const long *)arg;
  size_t i;
  (void)t;
  (void)state;
  for (i = 0; i < n; ++i) v += (long)(i + 1) * *(const long *)inputs[i];
  *output = new_value(v);
  return TETHER_OK;
}

/* Three actors; a node fed twice by the same node (its countdown counts both edges), a
 * node of ten inputs (more than a step keeps on its stack), a node fed by one edge alone
 * (queued without a countdown), executions pipelined four at a time: every execution
 * gets its own values, in order, and every value not handed over is dropped.
 *   p (a0) = x + 1;  q (a1) = p + 2p;  wide (a2) = x + 2p + 3q + 4p + ... + 10p;
 *   tail (a0) = wide + 5;  outputs: tail, q */
TEST(graph_shared_edges_and_wide_nodes) {
  const long rounds = scaled(400), depth = 4;
  static const long one = 1, zero = 0, five = 5;
  worker w[3];
  tether_actor a[3];
  tether_graph g = {0};
  tether_compiled c = {0};
  tether_future f[4];
  tether_compile_options o = compile_opts((size_t)depth, value_drop);
  uint32_t p, q, wide, tail, outs[2];
  long r, k, made_before;
  int i;
  counter_init(&g_value_drops);
  for (i = 0; i < 3; ++i) {
    worker_init(&w[i], i);
    a[i] = start_worker("shared-edges", &w[i], NULL, 0);
  }
  CHECK_ST(tether_graph_create(&g), TETHER_OK);
  CHECK_ST(tether_graph_add_node(g, a[0], NULL, sum_fn, (void *)&one, NULL, &p), TETHER_OK);
  CHECK_ST(tether_graph_add_node(g, a[1], NULL, sum_fn, (void *)&zero, NULL, &q), TETHER_OK);
  CHECK_ST(tether_graph_add_node(g, a[2], NULL, sum_fn, (void *)&zero, NULL, &wide), TETHER_OK);
  CHECK_ST(tether_graph_add_node(g, a[0], NULL, sum_fn, (void *)&five, NULL, &tail), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, p), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, p, q), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, p, q), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, TETHER_GRAPH_INPUT, wide), TETHER_OK);
  for (i = 0; i < 9; ++i) CHECK_ST(tether_graph_add_edge(g, i % 2 == 0 ? p : q, wide), TETHER_OK);
  CHECK_ST(tether_graph_add_edge(g, wide, tail), TETHER_OK);
  outs[0] = tail;
  outs[1] = q;
  CHECK_ST(tether_graph_set_outputs(g, outs, 2), TETHER_OK);
  CHECK_ST(tether_graph_compile(g, &o, &c), TETHER_OK);
  made_before = counter_get(&g_value_drops);
  for (r = 0; r < rounds; r += depth) {
    for (k = 0; k < depth; ++k) f[k] = execute_long(c, r + k);
    for (k = 0; k < depth; ++k) {
      const long x = r + k, pv = x + 1, qv = 3 * pv;
      const long wv = x + (2 + 4 + 6 + 8 + 10) * pv + (3 + 5 + 7 + 9) * qv;
      void *vals[2] = {0, 0};
      CHECK_EQ(future_outcome(f[k]), TETHER_SUCCEEDED);
      CHECK_ST(tether_future_outputs(f[k], vals, 2), TETHER_OK);
      CHECK_EQ(*(long *)vals[0], wv + 5);
      CHECK_EQ(*(long *)vals[1], qv);
      free(vals[0]);
      free(vals[1]);
      CHECK_ST(tether_future_release(f[k]), TETHER_OK);
    }
  }
  /* p and wide of every execution were dropped by it; tail and q were handed over. */
  CHECK_EQ(counter_get(&g_value_drops) - made_before, 2 * rounds);
  CHECK_ST(tether_compiled_release(c), TETHER_OK);
  CHECK_ST(tether_graph_release(g), TETHER_OK);
  for (i = 0; i < 3; ++i) {
    CHECK_ST(tether_actor_release(a[i]), TETHER_OK);
    worker_destroy(&w[i]);
  }
}
