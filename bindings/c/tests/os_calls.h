/*
 * os_calls.h — the few OS calls the C suite makes to look at what the library did: thread
 * ids, OS thread names, CPU sets, the stack minimum and the process's live threads. POSIX
 * (Linux) and Windows versions, so the same cases run on both.
 *
 * Include after harness.h, with _GNU_SOURCE defined on Linux.
 */
#ifndef TETHER_C_OS_CALLS_H
#define TETHER_C_OS_CALLS_H

#include "harness.h"

#if defined(_WIN32)
#  include <windows.h>
#  include <tlhelp32.h>
#  undef far  /* <windows.h> leaves these 16-bit keywords as macros */
#  undef near
#else
#  include <dirent.h>
#  include <sys/syscall.h>
#endif

/* os_tid: the OS id of the calling thread (gettid(); Windows: GetCurrentThreadId()). */
static inline long os_tid(void) {
#if defined(_WIN32)
  return (long)GetCurrentThreadId();
#else
  return (long)syscall(SYS_gettid);
#endif
}

#if defined(_WIN32)
typedef HRESULT(WINAPI *os_get_description_fn)(HANDLE, PWSTR *);
typedef HRESULT(WINAPI *os_set_description_fn)(HANDLE, PCWSTR);
/* os_kernel_fn: a kernel32 function that may be missing (older Windows), or NULL. */
static inline void (*os_kernel_fn(const char *name))(void) {
  return (void (*)(void))GetProcAddress(GetModuleHandleW(L"kernel32.dll"), name);
}
/* os_thread_name_of: the description of thread h as UTF-8; 0 when it has none. */
static inline int os_thread_name_of(HANDLE h, char *buf, size_t n) {
  os_get_description_fn get;
  PWSTR wide = NULL;
  int ok;
  get = (os_get_description_fn)os_kernel_fn("GetThreadDescription");
  buf[0] = '\0';
  if (get == NULL || FAILED(get(h, &wide)) || wide == NULL) return 0;
  ok = WideCharToMultiByte(CP_UTF8, 0, wide, -1, buf, (int)n, NULL, NULL) > 0;
  LocalFree(wide);
  return ok;
}
#endif

/* os_thread_name: the calling thread's name as OS tools show it; 0 on failure. */
static inline int os_thread_name(char *buf, size_t n) {
#if defined(_WIN32)
  return os_thread_name_of(GetCurrentThread(), buf, n);
#else
  return pthread_getname_np(pthread_self(), buf, n) == 0;
#endif
}

/* os_set_thread_name: names the calling thread for OS tools; 0 on failure. */
static inline int os_set_thread_name(const char *name) {
#if defined(_WIN32)
  os_set_description_fn set;
  wchar_t wide[64];
  set = (os_set_description_fn)os_kernel_fn("SetThreadDescription");
  if (set == NULL || MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 64) == 0) return 0;
  return SUCCEEDED(set(GetCurrentThread(), wide));
#else
  return pthread_setname_np(pthread_self(), name) == 0;
#endif
}

/* os_cpu_allowed: cpu is in the calling thread's CPU set. os_cpu_count: how many are. */
static inline int os_cpu_allowed(int cpu) {
#if defined(_WIN32)
  DWORD_PTR process = 0, system = 0;
  CHECK(GetProcessAffinityMask(GetCurrentProcess(), &process, &system) != 0);
  if (cpu < 0 || cpu >= (int)(8 * sizeof(DWORD_PTR))) return 0;
  /* A thread's own mask is not readable on Windows without changing it: set it to the
   * same value SetThreadAffinityMask returns as the old one. */
  {
    DWORD_PTR mine = SetThreadAffinityMask(GetCurrentThread(), process);
    CHECK(mine != 0);
    CHECK(SetThreadAffinityMask(GetCurrentThread(), mine) != 0);
    return (int)((mine >> cpu) & 1);
  }
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
#endif
}
static inline int os_cpu_count(void) {
  int n = 0, i;
  for (i = 0; i < 1024; i++) n += os_cpu_allowed(i);
  return n;
}

/* os_stack_min: the smallest stack the OS lets a thread have (tether's floor on Windows). */
static inline long os_stack_min(void) {
#if defined(_WIN32)
  return 16384;
#else
  return sysconf(_SC_THREAD_STACK_MIN);
#endif
}

/* os_thread_count: the process's live threads, not counting the library's control thread
 * ("tether-ctl": one per process, started on first use to join exited threads, never an
 * object's thread). Linux: the entries of /proc/self/task; Windows: a thread snapshot.
 * A joined thread leaves that list a moment after its join returned (the kernel wakes
 * the joiner before it reaps the thread), so a check that threads are gone polls
 * (CHECK_SOON) rather than reading once. */
static inline long os_thread_count(void) {
  long n = 0;
#if defined(_WIN32)
  THREADENTRY32 te;
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  CHECK(snap != INVALID_HANDLE_VALUE);
  te.dwSize = sizeof te;
  if (Thread32First(snap, &te)) {
    do {
      char name[64];
      HANDLE h;
      if (te.th32OwnerProcessID != GetCurrentProcessId()) continue;
      h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, te.th32ThreadID);
      if (h == NULL) continue; /* it has just exited */
      if (!os_thread_name_of(h, name, sizeof name) || strcmp(name, "tether-ctl") != 0) n++;
      CloseHandle(h);
      te.dwSize = sizeof te;
    } while (Thread32Next(snap, &te));
  }
  CloseHandle(snap);
#else
  struct dirent *d;
  DIR *dir = opendir("/proc/self/task");
  CHECK(dir != NULL);
  while ((d = readdir(dir)) != NULL) {
    char path[300], comm[32];
    FILE *f;
    if (d->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
    comm[0] = '\0';
    f = fopen(path, "r");
    if (f != NULL) { /* NULL: the thread has just exited */
      if (fgets(comm, sizeof comm, f) == NULL) comm[0] = '\0';
      fclose(f);
      if (strcmp(comm, "tether-ctl\n") != 0) n++;
    }
  }
  closedir(dir);
#endif
  return n;
}

#endif
