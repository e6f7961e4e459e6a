/*
 * test_wakeup.c — no wake-up is ever lost (issue: the executor stall under Go bursts).
 *
 * The Go reproduction's pattern, driven from C: bursts of fire-and-forget submissions
 * (1k to 64k) from several "goroutines" whose submissions hop between OS threads as Go's
 * do (each burst is cut into chunks that whichever of NTHREADS threads is free takes
 * next), then one submission with a future and a bounded wait. A lost wake-up leaves
 * the executor parked with work queued: the wait times out and the test fails with the
 * stats. The chaos build (preset `chaos`) makes the interleaving that lost it common.
 * Rounds: scaled(WAKEUP_ROUNDS), or TETHER_WAKEUP_ROUNDS for a long run.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

#define NTHREADS 6 /* more than an actor lane has rings (4): the rest go to the mailbox */
#define CHUNK 256
#define WAKEUP_ROUNDS 120

typedef struct burst {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long next_chunk, chunks; /* guarded by mu: chunks handed out / in this burst */
  long done_chunks;        /* guarded by mu */
  int quit;                /* guarded by mu */
  tether_executor exec;    /* one of exec/actor is set */
  tether_actor actor;
  const char *group; /* the actor's group the calls go to (NULL: its default thread) */
  long ran; /* __atomic: tasks run */
} burst;

static tether_status count_task(tether_task *t, void *arg) {
  (void)t;
  __atomic_fetch_add(&((burst *)arg)->ran, 1, __ATOMIC_RELAXED);
  return TETHER_OK;
}

static tether_status count_method(tether_task *t, void *state, void *arg) {
  (void)state;
  return count_task(t, arg);
}

static void submit_one(burst *b) {
  if (b->exec.id != 0) {
    CHECK_ST(tether_executor_submit(b->exec, count_task, b, NULL, NULL), TETHER_OK);
  } else {
    CHECK_ST(tether_actor_call(b->actor, b->group, count_method, b, NULL, NULL), TETHER_OK);
  }
}

/* hopper: one OS thread; takes whichever chunk of the current burst is next. */
static void *hopper(void *p) {
  burst *b = p;
  pthread_mutex_lock(&b->mu);
  for (;;) {
    while (!b->quit && b->next_chunk == b->chunks) pthread_cond_wait(&b->cv, &b->mu);
    if (b->quit) break;
    b->next_chunk++;
    pthread_mutex_unlock(&b->mu);
    for (int i = 0; i < CHUNK; ++i) submit_one(b);
    pthread_mutex_lock(&b->mu);
    if (++b->done_chunks == b->chunks) pthread_cond_broadcast(&b->cv);
  }
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

static long rounds(void) {
  const char *s = getenv("TETHER_WAKEUP_ROUNDS");
  return s ? strtol(s, NULL, 10) : scaled(WAKEUP_ROUNDS);
}

static void stats_of(burst *b, tether_executor_stats *st) {
  memset(st, 0, sizeof *st);
  st->struct_size = sizeof *st;
  if (b->exec.id != 0) {
    CHECK_ST(tether_executor_get_stats(b->exec, st), TETHER_OK);
  } else {
    CHECK_ST(tether_actor_get_stats(b->actor, st), TETHER_OK);
  }
}

static tether_status no_state(tether_task *t, void *arg, void **state_out) {
  (void)t;
  (void)arg;
  *state_out = NULL;
  return TETHER_OK;
}

static void run_bursts(burst *b) {
  pthread_t threads[NTHREADS];
  long total = 0;
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  for (int i = 0; i < NTHREADS; ++i) CHECK_EQ(pthread_create(&threads[i], NULL, hopper, b), 0);
  const long n = rounds();
  for (long round = 0; round < n; ++round) {
    const long size = 1024L << (round % 7); /* 1k .. 64k */
    pthread_mutex_lock(&b->mu);
    b->chunks = size / CHUNK;
    b->next_chunk = b->done_chunks = 0;
    pthread_cond_broadcast(&b->cv);
    while (b->done_chunks != b->chunks) pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    total += size;
    /* The Go loop's Submit(...).Wait with a bound: a parked executor never answers. */
    tether_future f = {0};
    if (b->exec.id != 0) {
      CHECK_ST(tether_executor_submit(b->exec, count_task, b, NULL, &f), TETHER_OK);
    } else {
      CHECK_ST(tether_actor_call(b->actor, b->group, count_method, b, NULL, &f), TETHER_OK);
    }
    total += 1;
    tether_status st = tether_future_wait(f, 10 * SEC);
    if (st != TETHER_OK) {
      tether_executor_stats s;
      stats_of(b, &s);
      harness_fail(__FILE__, __LINE__,
                   "round %ld (burst %ld): wait = %s; ran %ld of %ld; executor queued %llu completed %llu",
                   round, size, tether_status_name(st), __atomic_load_n(&b->ran, __ATOMIC_RELAXED), total,
                   (unsigned long long)s.queued, (unsigned long long)s.completed);
    }
    CHECK_ST(tether_future_release(f), TETHER_OK);
    if (b->group == NULL) {
      /* Everything before the future ran (one consumer, FIFO per producer and joined here). */
      CHECK_EQ(__atomic_load_n(&b->ran, __ATOMIC_RELAXED), total);
    } else {
      /* Several consumers: the future's call may finish while the others still run earlier
       * calls; a parked consumer with work queued never gets there. */
      CHECK_SOON(__atomic_load_n(&b->ran, __ATOMIC_RELAXED) == total);
    }
  }
  pthread_mutex_lock(&b->mu);
  b->quit = 1;
  pthread_cond_broadcast(&b->cv);
  pthread_mutex_unlock(&b->mu);
  for (int i = 0; i < NTHREADS; ++i) CHECK_EQ(pthread_join(threads[i], NULL), 0);
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
}

static void executor_bursts(int64_t idle_spin_ns) {
  burst b;
  memset(&b, 0, sizeof b);
  tether_executor_options o;
  tether_executor_options_init(&o);
  o.name = "bursts";
  o.idle_spin_ns = idle_spin_ns;
  CHECK_ST(tether_executor_create(&o, &b.exec), TETHER_OK);
  run_bursts(&b);
  CHECK_ST(tether_executor_release(b.exec), TETHER_OK);
}

TEST(wakeup_executor_bursts_from_hopping_threads) { executor_bursts(20000); }

/* No idle spin: the executor parks whenever it catches up, thousands of times a round. */
TEST(wakeup_executor_bursts_no_spin) { executor_bursts(0); }

/* Tells go through the per-producer rings (4) and the mailbox (the other 2 threads),
 * onto an executor that parks at once, so the ring side of the protocol is attacked too. */
TEST(wakeup_actor_tell_bursts_from_hopping_threads) {
  burst b;
  memset(&b, 0, sizeof b);
  tether_executor_options eo;
  tether_executor_options_init(&eo);
  eo.name = "tells-exec";
  eo.idle_spin_ns = 0;
  tether_executor e;
  CHECK_ST(tether_executor_create(&eo, &e), TETHER_OK);
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.name = "tells";
  o.executor = e;
  CHECK_ST(tether_actor_create(&o, no_state, NULL, NULL, NULL, &b.actor), TETHER_OK);
  run_bursts(&b);
  CHECK_ST(tether_actor_release(b.actor), TETHER_OK);
  CHECK_ST(tether_executor_release(e), TETHER_OK);
}

/* A group of three threads (a SharedLane: N consumers, the counting wait protocol) whose
 * threads park between bursts and wake for the next: every call runs, none waits for ever. */
TEST(wakeup_group_bursts_from_hopping_threads) {
  burst b;
  memset(&b, 0, sizeof b);
  tether_group_spec pool = {"pool", 3};
  tether_actor_options o;
  tether_actor_options_init(&o);
  o.name = "group-bursts";
  o.groups = &pool;
  o.group_count = 1;
  CHECK_ST(tether_actor_create(&o, no_state, NULL, NULL, NULL, &b.actor), TETHER_OK);
  b.group = "pool";
  run_bursts(&b);
  CHECK_ST(tether_actor_release(b.actor), TETHER_OK);
}
