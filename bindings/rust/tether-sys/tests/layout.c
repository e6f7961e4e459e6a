/* layout.c — prints the layout of every struct and the value of every constant of
 * tether.h, one "key value" line each. tests/layout.rs compiles it against the real
 * header, runs it, and compares each line with the hand-written Rust declarations. */
#include <tether/tether.h>

#include <stddef.h>
#include <stdio.h>

#define STRUCT(T) \
  printf("sizeof %s %lu\n", #T, (unsigned long)sizeof(T)); \
  printf("alignof %s %lu\n", #T, (unsigned long)_Alignof(T))
#define FIELD(T, f) printf("offsetof %s.%s %lu\n", #T, #f, (unsigned long)offsetof(T, f))
#define FSIZE(T, f) printf("fieldsize %s.%s %lu\n", #T, #f, (unsigned long)sizeof(((T *)0)->f))
#define CONST(c) printf("const %s %lld\n", #c, (long long)(c))

int main(void) {
  STRUCT(tether_runner); FIELD(tether_runner, id); FSIZE(tether_runner, id);
  STRUCT(tether_executor); FIELD(tether_executor, id); FSIZE(tether_executor, id);
  STRUCT(tether_actor); FIELD(tether_actor, id); FSIZE(tether_actor, id);
  STRUCT(tether_future); FIELD(tether_future, id); FSIZE(tether_future, id);
  STRUCT(tether_error); FIELD(tether_error, id); FSIZE(tether_error, id);
  STRUCT(tether_graph); FIELD(tether_graph, id); FSIZE(tether_graph, id);
  STRUCT(tether_compiled); FIELD(tether_compiled, id); FSIZE(tether_compiled, id);

  STRUCT(tether_runner_options);
  FIELD(tether_runner_options, struct_size); FSIZE(tether_runner_options, struct_size);
  FIELD(tether_runner_options, name); FSIZE(tether_runner_options, name);
  FIELD(tether_runner_options, stop_on_error); FSIZE(tether_runner_options, stop_on_error);
  FIELD(tether_runner_options, stack_size); FSIZE(tether_runner_options, stack_size);

  STRUCT(tether_executor_options);
  FIELD(tether_executor_options, struct_size); FSIZE(tether_executor_options, struct_size);
  FIELD(tether_executor_options, name); FSIZE(tether_executor_options, name);
  FIELD(tether_executor_options, cpu); FSIZE(tether_executor_options, cpu);
  FIELD(tether_executor_options, queue_capacity); FSIZE(tether_executor_options, queue_capacity);
  FIELD(tether_executor_options, stack_size); FSIZE(tether_executor_options, stack_size);
  FIELD(tether_executor_options, idle_spin_ns); FSIZE(tether_executor_options, idle_spin_ns);
  FIELD(tether_executor_options, manual); FSIZE(tether_executor_options, manual);

  STRUCT(tether_executor_stats);
  FIELD(tether_executor_stats, struct_size); FSIZE(tether_executor_stats, struct_size);
  FIELD(tether_executor_stats, queued); FSIZE(tether_executor_stats, queued);
  FIELD(tether_executor_stats, completed); FSIZE(tether_executor_stats, completed);
  FIELD(tether_executor_stats, failed); FSIZE(tether_executor_stats, failed);
  FIELD(tether_executor_stats, cancelled); FSIZE(tether_executor_stats, cancelled);
  FIELD(tether_executor_stats, rejected); FSIZE(tether_executor_stats, rejected);
  FIELD(tether_executor_stats, errors_dropped); FSIZE(tether_executor_stats, errors_dropped);
  FIELD(tether_executor_stats, os_thread_id); FSIZE(tether_executor_stats, os_thread_id);
  STRUCT(tether_actor_stats);

  STRUCT(tether_group_spec);
  FIELD(tether_group_spec, name); FSIZE(tether_group_spec, name);
  FIELD(tether_group_spec, threads); FSIZE(tether_group_spec, threads);

  STRUCT(tether_actor_options);
  FIELD(tether_actor_options, struct_size); FSIZE(tether_actor_options, struct_size);
  FIELD(tether_actor_options, name); FSIZE(tether_actor_options, name);
  FIELD(tether_actor_options, executor); FSIZE(tether_actor_options, executor);
  FIELD(tether_actor_options, groups); FSIZE(tether_actor_options, groups);
  FIELD(tether_actor_options, group_count); FSIZE(tether_actor_options, group_count);
  FIELD(tether_actor_options, mailbox_capacity); FSIZE(tether_actor_options, mailbox_capacity);

  STRUCT(tether_compile_options);
  FIELD(tether_compile_options, struct_size); FSIZE(tether_compile_options, struct_size);
  FIELD(tether_compile_options, channel_capacity); FSIZE(tether_compile_options, channel_capacity);
  FIELD(tether_compile_options, value_drop); FSIZE(tether_compile_options, value_drop);

  printf("sizeof tether_status %lu\n", (unsigned long)sizeof(tether_status));

  CONST(TETHER_VERSION_MAJOR); CONST(TETHER_VERSION_MINOR); CONST(TETHER_VERSION_PATCH);
  CONST(TETHER_VERSION);
#define X(suffix, value, description) CONST(TETHER_##suffix);
  TETHER_STATUS_MAP(X)
#undef X
  CONST(TETHER_PENDING); CONST(TETHER_RUNNING); CONST(TETHER_SUCCEEDED);
  CONST(TETHER_FAILED); CONST(TETHER_CANCELLED);
  CONST(TETHER_ACTOR_ALIVE); CONST(TETHER_ACTOR_DEAD); CONST(TETHER_ACTOR_STOPPED);
  CONST(TETHER_STOP_DRAIN); CONST(TETHER_STOP_CANCEL);
  CONST(TETHER_GRAPH_INPUT);
  return 0;
}
