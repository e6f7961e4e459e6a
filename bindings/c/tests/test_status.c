/*
 * test_status.c — status codes, their names and sentences, the thread-local last-error text,
 * the snprintf-like string copies, and the version.
 */
#define _POSIX_C_SOURCE 200809L
#include "fixtures.h"

/* The contract's table, written out independently of the header's X-macro. */
static const struct {
  int32_t code;
  int32_t value;
  const char *name;
} contract_codes[] = {
    {TETHER_OK, 0, "TETHER_OK"},
    {TETHER_E_INVALID_ARGUMENT, 1, "TETHER_E_INVALID_ARGUMENT"},
    {TETHER_E_INVALID_HANDLE, 2, "TETHER_E_INVALID_HANDLE"},
    {TETHER_E_WRONG_STATE, 3, "TETHER_E_WRONG_STATE"},
    {TETHER_E_TIMEOUT, 4, "TETHER_E_TIMEOUT"},
    {TETHER_E_CANCELLED, 5, "TETHER_E_CANCELLED"},
    {TETHER_E_DEADLOCK, 6, "TETHER_E_DEADLOCK"},
    {TETHER_E_THREAD_BUSY, 7, "TETHER_E_THREAD_BUSY"},
    {TETHER_E_ACTOR_DEAD, 8, "TETHER_E_ACTOR_DEAD"},
    {TETHER_E_QUEUE_FULL, 9, "TETHER_E_QUEUE_FULL"},
    {TETHER_E_SHUTDOWN, 10, "TETHER_E_SHUTDOWN"},
    {TETHER_E_NO_MEMORY, 11, "TETHER_E_NO_MEMORY"},
    {TETHER_E_THREAD_CREATE, 12, "TETHER_E_THREAD_CREATE"},
    {TETHER_E_TASK_FAILED, 13, "TETHER_E_TASK_FAILED"},
    {TETHER_E_EXCEPTION, 14, "TETHER_E_EXCEPTION"},
    {TETHER_E_UNKNOWN_EXCEPTION, 15, "TETHER_E_UNKNOWN_EXCEPTION"},
    {TETHER_E_PANIC, 16, "TETHER_E_PANIC"},
    {TETHER_E_NOT_FOUND, 17, "TETHER_E_NOT_FOUND"},
    {TETHER_E_INTERNAL, 18, "TETHER_E_INTERNAL"},
    {TETHER_E_FORKED, 19, "TETHER_E_FORKED"},
};
#define N_CODES ((int)(sizeof contract_codes / sizeof contract_codes[0]))

/* The header's descriptions, from its one table. */
#define DESCRIPTION_ENTRY(suffix, value, description) description,
static const char *const header_descriptions[] = {TETHER_STATUS_MAP(DESCRIPTION_ENTRY)};
#undef DESCRIPTION_ENTRY

static const int32_t unknown_codes[] = {-1, 20, 21, 100, INT32_MIN, INT32_MAX};
#define N_UNKNOWN ((int)(sizeof unknown_codes / sizeof unknown_codes[0]))

TEST(status_names) {
  int i, j;
  CHECK_EQ(N_CODES, 20);
  CHECK_EQ(sizeof header_descriptions / sizeof header_descriptions[0], 20);
  for (i = 0; i < N_CODES; i++) {
    CHECK_EQ(contract_codes[i].code, contract_codes[i].value); /* stable numbers */
    CHECK_EQ(contract_codes[i].value, i);
    CHECK_STR(tether_status_name(contract_codes[i].code), contract_codes[i].name);
    for (j = 0; j < i; j++) CHECK(strcmp(tether_status_name(j), tether_status_name(i)) != 0);
  }
  for (i = 0; i < N_UNKNOWN; i++) CHECK_STR(tether_status_name(unknown_codes[i]), "TETHER_E_UNKNOWN");
}

TEST(status_describe) {
  int i;
  for (i = 0; i < N_CODES; i++) {
    const char *d = tether_status_describe(i);
    CHECK(d != NULL && d[0] != '\0');
    CHECK_STR(d, header_descriptions[i]); /* the library speaks from the header's table */
    CHECK(strcmp(d, "unknown status code") != 0);
  }
  for (i = 0; i < N_UNKNOWN; i++)
    CHECK_STR(tether_status_describe(unknown_codes[i]), "unknown status code");
}

/* ---- last-error text -------------------------------------------------------------------- */

typedef struct fresh_thread {
  size_t len_before;
  char buf_before[8];
  size_t len_after;
  char buf_after[256];
} fresh_thread;

/* On a new thread nothing failed yet: 0 and "". Then one failure gives a text. */
static void *fresh_main(void *arg) {
  fresh_thread *f = (fresh_thread *)arg;
  tether_runner none = {0};
  int32_t s;
  memset(f->buf_before, 'X', sizeof f->buf_before);
  f->len_before = tether_last_error_message(f->buf_before, sizeof f->buf_before);
  (void)tether_runner_poll(none, &s);
  f->len_after = tether_last_error_message(f->buf_after, sizeof f->buf_after);
  return NULL;
}

TEST(last_error_message) {
  fresh_thread f;
  pthread_t th;
  tether_runner none = {0}, r = {0};
  int32_t s;
  char first[256], now[256];
  size_t len;

  CHECK(pthread_create(&th, NULL, fresh_main, &f) == 0);
  CHECK(pthread_join(th, NULL) == 0); /* fresh_main never blocks */
  CHECK_EQ(f.len_before, 0);
  CHECK_EQ(f.buf_before[0], '\0');
  CHECK(f.len_after > 0);
  CHECK_EQ(strlen(f.buf_after), f.len_after);

  /* This thread: fail, read the text, succeed, read it again: unchanged. */
  CHECK_ST(tether_runner_poll(none, &s), TETHER_E_INVALID_HANDLE);
  len = tether_last_error_message(NULL, 0);
  CHECK(len > 0 && len < sizeof first);
  CHECK_EQ(tether_last_error_message(first, sizeof first), len);
  CHECK_EQ(strlen(first), len);
  CHECK_ST(tether_runner_start(NULL, ok_fn, NULL, NULL, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  tether_last_error_message(now, sizeof now);
  CHECK_STR(now, first); /* successful calls do not clear it */

  /* A different failure replaces it. */
  CHECK_ST(tether_runner_poll(r, NULL), TETHER_E_INVALID_ARGUMENT);
  CHECK(tether_last_error_message(now, sizeof now) > 0);
  CHECK(strcmp(now, first) != 0);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
}

/* The text is per thread: another thread's failures leave this thread's text alone. */
static void *fail_elsewhere(void *arg) {
  tether_runner none = {0};
  (void)arg;
  (void)tether_runner_poll(none, NULL);
  return NULL;
}

TEST(last_error_thread_local) {
  pthread_t th;
  tether_runner none = {0};
  int32_t s;
  char before[256], after[256];
  CHECK_ST(tether_runner_poll(none, &s), TETHER_E_INVALID_HANDLE);
  tether_last_error_message(before, sizeof before);
  CHECK(pthread_create(&th, NULL, fail_elsewhere, NULL) == 0);
  CHECK(pthread_join(th, NULL) == 0);
  tether_last_error_message(after, sizeof after);
  CHECK_STR(after, before);
}

/* ---- snprintf-like copies: cap 0 (NULL buf) gives the length, cap 1 writes a NUL ---------- */

typedef size_t (*copy_fn)(void *ctx, char *buf, size_t cap);

static size_t copy_message(void *ctx, char *buf, size_t cap) {
  return tether_error_message(*(tether_error *)ctx, buf, cap);
}
static size_t copy_thread_name(void *ctx, char *buf, size_t cap) {
  return tether_error_thread_name(*(tether_error *)ctx, buf, cap);
}
static size_t copy_last_error(void *ctx, char *buf, size_t cap) {
  (void)ctx;
  return tether_last_error_message(buf, cap);
}

static void check_copy_out(copy_fn f, void *ctx, const char *want, const char *what) {
  char buf[300];
  size_t n = strlen(want), cap;
  if (n < 4 || n + 2 > sizeof buf) harness_fail(__FILE__, __LINE__, "[%s] bad fixture", what);
  if (f(ctx, NULL, 0) != n) harness_fail(__FILE__, __LINE__, "[%s] NULL/0 length", what);
  memset(buf, 'X', sizeof buf);
  if (f(ctx, buf, 0) != n || buf[0] != 'X') /* cap 0: writes nothing */
    harness_fail(__FILE__, __LINE__, "[%s] cap 0 wrote", what);
  for (cap = 1; cap <= n + 1; cap++) {
    memset(buf, 'X', sizeof buf);
    if (f(ctx, buf, cap) != n) harness_fail(__FILE__, __LINE__, "[%s] cap %zu length", what, cap);
    if (buf[cap - 1] != '\0' || strncmp(buf, want, cap - 1) != 0 || buf[cap] != 'X')
      harness_fail(__FILE__, __LINE__, "[%s] cap %zu wrote \"%.*s\"", what, cap, (int)cap, buf);
  }
  memset(buf, 'X', sizeof buf);
  f(ctx, buf, 4); /* the documented example: 3 bytes and a NUL */
  if (memcmp(buf, want, 3) != 0 || buf[3] != '\0' || buf[4] != 'X')
    harness_fail(__FILE__, __LINE__, "[%s] cap 4", what);
  memset(buf, 'X', sizeof buf);
  f(ctx, buf, sizeof buf);
  if (strcmp(buf, want) != 0) harness_fail(__FILE__, __LINE__, "[%s] full copy \"%s\"", what, buf);
}

TEST(string_buffers) {
  tether_runner r = {0};
  tether_runner_options o = runner_opts("uploader");
  tether_error e = {0};
  char last[256];
  int32_t s;
  CHECK_ST(tether_runner_start(&o, fail_fn, (void *)"disk full", NULL, &r), TETHER_OK);
  CHECK_ST(tether_runner_join(r, T_LONG), TETHER_OK);
  CHECK_ST(tether_runner_error(r, &e), TETHER_OK);
  check_copy_out(copy_message, &e, "disk full", "error message");
  check_copy_out(copy_thread_name, &e, "uploader", "error thread name");
  CHECK_EQ(tether_error_type_name(e, NULL, 0), 0);

  CHECK_ST(tether_runner_poll((tether_runner){0}, &s), TETHER_E_INVALID_HANDLE);
  CHECK(tether_last_error_message(last, sizeof last) < sizeof last);
  check_copy_out(copy_last_error, NULL, last, "last error");

  CHECK_ST(tether_error_release(e), TETHER_OK);
  CHECK_ST(tether_runner_release(r), TETHER_OK);
}

/* ---- version ---------------------------------------------------------------------------- */

TEST(version) {
  char want[32];
  CHECK_EQ(tether_version(), TETHER_VERSION); /* header and library agree */
  CHECK_EQ(TETHER_VERSION, (TETHER_VERSION_MAJOR << 16) | (TETHER_VERSION_MINOR << 8) | TETHER_VERSION_PATCH);
  sprintf(want, "%d.%d.%d", TETHER_VERSION_MAJOR, TETHER_VERSION_MINOR, TETHER_VERSION_PATCH);
  CHECK_STR(tether_version_string(), want);
}
