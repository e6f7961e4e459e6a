/*
 * headertest.c — the public header on its own, as strict C99 (libgit2's tests/headertest).
 *
 * Built with -std=c99 -pedantic -Wall -Wextra -Werror and extra warnings; it includes
 * nothing but <tether/tether.h>, twice (the include guard must hold), and touches a type
 * and a macro of every section so each is parsed as a user would use it. Linking and
 * running it checks the header's version against the library's.
 */
#include <tether/tether.h>
#include <tether/tether.h>

/* Every status code's name from the header's one table must be a distinct constant. */
#define HEADERTEST_CASE(suffix, value, description) case TETHER_##suffix:
static int is_status_code(tether_status s) {
  switch (s) {
    TETHER_STATUS_MAP(HEADERTEST_CASE)
    return 1;
    default:
      return 0;
  }
}
#undef HEADERTEST_CASE

int main(void) {
  tether_runner_options o;
  tether_runner r = {0};
  tether_error e = {0};
  tether_fn fn = 0;
  tether_drop_fn drop = 0;
  tether_notify_fn notify = 0;
  const tether_task *task = 0;
  int32_t state = TETHER_PENDING;
  (void)fn;
  (void)drop;
  (void)notify;
  (void)task;
  (void)state;
  (void)e;
  tether_runner_options_init(&o);
  if (!is_status_code(TETHER_E_FORKED) || is_status_code(20)) return 1;
  if (tether_runner_poll(r, &state) != TETHER_E_INVALID_HANDLE) return 1;
  return tether_version() == TETHER_VERSION ? 0 : 1;
}
