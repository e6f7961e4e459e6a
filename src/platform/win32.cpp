// The platform seam on Windows (Win32 threads; no fork, no signals to block).
#include "platform/platform.h"

#include <process.h>
#include <windows.h>

#include "platform/word_park_fallback.h"  // WaitOnAddress would add an import beyond kernel32

#include <chrono>
#include <climits>
#include <cwchar>

namespace tether::platform {
namespace {

// Windows rounds a thread's stack up to its allocation granularity (64 KiB); the floor is
// the one Linux has, so the same options are valid on both.
constexpr std::size_t kMinStackSize = 16384;

struct Trampoline {
  void (*entry)(void*);
  void* arg;
};

unsigned __stdcall thread_main(void* raw) {
  const Trampoline t = *static_cast<Trampoline*>(raw);
  delete static_cast<Trampoline*>(raw);
  t.entry(t.arg);
  return 0;
}

// SetThreadDescription/GetThreadDescription exist from Windows 10 1607 on: looked up once,
// so the library still loads where they are missing (names are then not shown).
using SetDescription = HRESULT(WINAPI*)(HANDLE, PCWSTR);
using GetDescription = HRESULT(WINAPI*)(HANDLE, PWSTR*);

template <typename Fn>
Fn kernel_function(const char* name) noexcept {
  HMODULE kernel = GetModuleHandleW(L"kernel32.dll");
  if (kernel == nullptr) return nullptr;
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(kernel, name)));
}

const SetDescription g_set_description = kernel_function<SetDescription>("SetThreadDescription");
const GetDescription g_get_description = kernel_function<GetDescription>("GetThreadDescription");

// The exit notice: a native TLS slot holding arg, read by this module's own TLS callback
// when a thread detaches from tether.dll. Not a C++ thread_local with a destructor: with
// mingw-w64 those run from a winpthreads key destructor, and so does the one of emutls
// (which backs every thread_local here), and emutls's key is the older one, so it runs
// first and frees the thread's thread_locals; the notice then read freed memory, called
// through a stale pointer, faulted inside the loader's TLS callback (which swallows it),
// and left winpthreads' key lock read-held, so the process hung at exit in
// pthread_key_delete. Our callback sits in .CRT$XLE: after the C runtime's (.CRT$XLC/D),
// before winpthreads' (.CRT$XLF), so every thread_local of this library is still there.
// Like a POSIX key, it is disarmed before each call, and a call that arms it again gets
// another round (4 in all, as glibc's PTHREAD_DESTRUCTOR_ITERATIONS).
// Invariants: g_exit_slot is written only at load and unload (constant-initialised to
// "none", so a callback before the static initialisers sees no slot); a thread's slot is
// non-null only while its notice is armed; t_exit_fn is read only then (so a thread that
// never armed it allocates no thread_local storage at its end).
DWORD g_exit_slot = TLS_OUT_OF_INDEXES;  // none: notify_at_thread_exit fails
[[maybe_unused]] const bool g_exit_slot_made = (g_exit_slot = TlsAlloc(), true);
thread_local void (*t_exit_fn)(void*) noexcept = nullptr;

void run_exit_notice() noexcept {
  if (g_exit_slot == TLS_OUT_OF_INDEXES) return;
  for (int round = 0; round < 4; ++round) {
    void* arg = TlsGetValue(g_exit_slot);
    if (arg == nullptr) return;
    TlsSetValue(g_exit_slot, nullptr);  // a slot below 64 or already expanded: cannot fail
    t_exit_fn(arg);
  }
}

// At process exit (DLL_PROCESS_DETACH with reserved set) nothing runs: Windows has already
// ended every other thread, so a cleanup that drops the last reference to an actor (which
// joins its threads) or takes a lock a killed thread held would wait forever, and the
// owner the notice tells is gone too. The exiting thread's state goes with the process,
// as on POSIX, where the thread that calls exit() runs no key destructors either.
// FreeLibrary (reserved null) is a detach while threads still run: the calling thread's
// notice runs, then the slot is given back (tether.h: no other thread may hold objects).
void NTAPI on_tls_event(PVOID, DWORD reason, PVOID reserved) {
  if (reason == DLL_THREAD_DETACH) {
    run_exit_notice();
  } else if (reason == DLL_PROCESS_DETACH && reserved == nullptr && g_exit_slot != TLS_OUT_OF_INDEXES) {
    run_exit_notice();
    TlsFree(g_exit_slot);
    g_exit_slot = TLS_OUT_OF_INDEXES;
  }
}

}  // namespace

Thread current_thread() noexcept { return Thread{0, GetCurrentThreadId()}; }

bool same_thread(const Thread& a, const Thread& b) noexcept { return a.id == b.id; }

std::uint64_t current_thread_id() noexcept { return GetCurrentThreadId(); }

int current_cpu() noexcept { return static_cast<int>(GetCurrentProcessorNumber()); }

std::int64_t monotonic_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void yield_cpu() noexcept { (void)SwitchToThread(); }

void* map_huge_region() noexcept { return nullptr; }  // large pages need SeLockMemoryPrivilege

std::size_t min_stack_size() noexcept { return kMinStackSize; }

bool cpu_in_range(int cpu) noexcept { return cpu >= 0 && cpu < static_cast<int>(sizeof(DWORD_PTR) * 8); }

std::string allowed_cpus() {
  DWORD_PTR process = 0;
  DWORD_PTR system = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) == 0) return "unknown";
  std::string list;
  for (int cpu = 0; cpu < static_cast<int>(sizeof(DWORD_PTR) * 8); ++cpu) {
    if (((process >> cpu) & 1) == 0) continue;
    if (!list.empty()) list += ',';
    list += std::to_string(cpu);
  }
  return list.empty() ? "unknown" : list;
}

StartResult start_thread(std::size_t stack_size, int cpu, void (*entry)(void*), void* arg, Thread* out,
                         std::string* reason) {
  if (stack_size > UINT_MAX) return StartResult::kStackSizeUnusable;
  auto* trampoline = new Trampoline{entry, arg};
  unsigned id = 0;
  // Suspended, so the pin is in place before the thread runs; _beginthreadex (not
  // CreateThread) so the C runtime's per-thread state is set up and freed.
  const std::uintptr_t h = _beginthreadex(nullptr, static_cast<unsigned>(stack_size), &thread_main, trampoline,
                                          CREATE_SUSPENDED | STACK_SIZE_PARAM_IS_A_RESERVATION, &id);
  if (h == 0) {
    delete trampoline;
    *reason = "error " + std::to_string(GetLastError());
    return StartResult::kRefused;
  }
  HANDLE thread = reinterpret_cast<HANDLE>(h);
  if (cpu >= 0 && SetThreadAffinityMask(thread, DWORD_PTR{1} << cpu) == 0) {
    // Never started: end it before it runs, then free what it would have owned.
    TerminateThread(thread, 1);
    WaitForSingleObject(thread, INFINITE);
    CloseHandle(thread);
    delete trampoline;
    return StartResult::kCannotPin;
  }
  ResumeThread(thread);
  *out = Thread{h, id};
  return StartResult::kStarted;
}

void join_thread(const Thread& t) noexcept {
  HANDLE thread = reinterpret_cast<HANDLE>(t.handle);
  WaitForSingleObject(thread, INFINITE);
  CloseHandle(thread);
}

void release_ended_thread(const Thread& t) noexcept { join_thread(t); }

// Windows has no per-thread slice request: its quantum is the system's.
std::int64_t current_time_slice_ns() noexcept { return 0; }

bool request_time_slice(std::int64_t ns) noexcept {
  (void)ns;
  return false;
}

// Nor a policy that gives up wake-up preemption: threads keep theirs.
FairPolicy current_fair_policy() noexcept { return FairPolicy::kNone; }

bool switch_fair_policy(FairPolicy from, FairPolicy to) noexcept {
  (void)from;
  (void)to;
  return false;
}

void set_current_thread_name(const std::string& name) noexcept {
  if (g_set_description == nullptr) return;
  wchar_t wide[64] = {};
  if (MultiByteToWideChar(CP_UTF8, 0, name.c_str(), -1, wide, 63) == 0) return;
  g_set_description(GetCurrentThread(), wide);
}

std::string current_thread_name() {
  if (g_get_description == nullptr) return {};
  PWSTR wide = nullptr;
  if (FAILED(g_get_description(GetCurrentThread(), &wide)) || wide == nullptr) return {};
  char buf[256] = {};
  const int n = WideCharToMultiByte(CP_UTF8, 0, wide, -1, buf, sizeof buf, nullptr, nullptr);
  LocalFree(wide);
  return n > 0 ? std::string(buf) : std::string();
}

bool notify_at_thread_exit(void (*fn)(void*) noexcept, void* arg) noexcept {
  if (g_exit_slot == TLS_OUT_OF_INDEXES) return false;
  t_exit_fn = fn;
  return TlsSetValue(g_exit_slot, arg) != 0;  // the first value past slot 64 allocates
}

bool enable_process_barrier() noexcept { return true; }  // FlushProcessWriteBuffers: Vista on

bool process_barrier() noexcept {
  FlushProcessWriteBuffers();
  return true;
}

bool threads_run_at_exit() noexcept { return false; }

bool on_fork(void (*)(), void (*)(), void (*)()) noexcept { return false; }

void park_while(const std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t deadline_ns) noexcept {
  word_park_fallback::park_while(word, expected, deadline_ns);
}

void wake_one_parked(const std::atomic<std::uint32_t>& word) noexcept { word_park_fallback::wake_all(word); }

void wake_all_parked(const std::atomic<std::uint32_t>& word) noexcept {
  word_park_fallback::wake_all(word);
}

}  // namespace tether::platform

// The loader calls the callbacks between __xl_a and __xl_z (mingw-w64's tlssup.c) in
// section-name order; _tls_used (the TLS directory naming them) is referenced so it is
// linked even if nothing else in the DLL needed it.
extern "C" {
extern const IMAGE_TLS_DIRECTORY _tls_used;
__attribute__((section(".CRT$XLE"), used)) PIMAGE_TLS_CALLBACK tether_tls_exit_callback =
    &tether::platform::on_tls_event;
__attribute__((used)) const void* const tether_tls_directory = &_tls_used;
}
