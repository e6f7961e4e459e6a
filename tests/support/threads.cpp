// threads.cpp: see threads.h.
#include "support/threads.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>

namespace tether_test {

uint64_t tid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

std::string os_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  DIR *d = opendir("/proc/self/task");
  if (d == nullptr) return names;
  while (dirent *ent = readdir(d)) {
    if (ent->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + ent->d_name + "/comm");
    std::string comm;
    if (std::getline(f, comm)) names.push_back(comm);
  }
  closedir(d);
  return names;
}

size_t threads_named(const std::string &prefix) {
  size_t n = 0;
  for (const std::string &s : thread_names()) n += s.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

bool threads_gone(const std::string &prefix, std::chrono::nanoseconds d) {
  return wait_until([&] { return threads_named(prefix) == 0; }, d);
}

}  // namespace tether_test
