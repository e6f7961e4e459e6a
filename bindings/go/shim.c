// shim.c — see shim.h. Each trampoline only converts `void *` to uintptr_t and calls the
// Go side (callbacks.go), which recovers every panic: none reaches the library's frames.
#include "shim.h"

#include "_cgo_export.h"

static tether_status tgo_task(tether_task *t, void *arg) {
  return goTaskTramp(t, (uintptr_t)arg);
}

static void tgo_drop(void *arg) { goDropTramp((uintptr_t)arg); }

static void tgo_notify(void *arg) { goNotifyTramp((uintptr_t)arg); }

static tether_status tgo_ctor(tether_task *t, void *arg, void **state_out) {
  uintptr_t state = 0;
  tether_status st = goCtorTramp(t, (uintptr_t)arg, &state);
  *state_out = (void *)state;
  return st;
}

static void tgo_dtor(void *state) {
  if (state != NULL) goDtorTramp((uintptr_t)state);
}

static tether_status tgo_method(tether_task *t, void *state, void *arg) {
  return goMethodTramp(t, (uintptr_t)state, (uintptr_t)arg);
}

tether_status tgo_runner_start(const tether_runner_options *o, uintptr_t h, tether_runner *out) {
  return tether_runner_start(o, tgo_task, (void *)h, tgo_drop, out);
}

tether_status tgo_task_spawn(tether_task *t, const char *name, uintptr_t h) {
  return tether_task_spawn(t, name, tgo_task, (void *)h, tgo_drop);
}

tether_status tgo_runner_on_done(tether_runner r, uintptr_t h) {
  return tether_runner_on_done(r, tgo_notify, (void *)h, tgo_drop);
}

tether_status tgo_executor_submit(tether_executor e, uintptr_t h, tether_future *out) {
  return tether_executor_submit(e, tgo_task, (void *)h, tgo_drop, out);
}

tether_status tgo_future_on_done(tether_future f, uintptr_t h) {
  return tether_future_on_done(f, tgo_notify, (void *)h, tgo_drop);
}

tether_status tgo_actor_create(const tether_actor_options *o, uintptr_t h, tether_actor *out) {
  return tether_actor_create(o, tgo_ctor, tgo_dtor, (void *)h, tgo_drop, out);
}

tether_status tgo_actor_call(tether_actor a, const char *group, uintptr_t h, tether_future *out) {
  return tether_actor_call(a, group, tgo_method, (void *)h, tgo_drop, out);
}
