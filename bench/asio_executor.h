// asio_executor.h: Boost.Asio as a single-thread executor (the io_context a user would
// run on one thread), a baseline of tether_bench_actor and a peer of bench/compare.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <thread>

#include "baseline_executor.h"

namespace tether_bench {

// AsioExecutor: an io_context run by one thread, kept alive by a work guard.
class AsioExecutor {
 public:
  explicit AsioExecutor(int cpu = -1)
      : io_(1), guard_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {
    PinThread(thread_, cpu);
  }
  ~AsioExecutor() {
    guard_.reset();  // run() returns once what is queued has run
    thread_.join();
  }
  AsioExecutor(const AsioExecutor &) = delete;
  AsioExecutor &operator=(const AsioExecutor &) = delete;
  boost::asio::io_context &io() { return io_; }

 private:
  boost::asio::io_context io_;  // concurrency hint 1: one thread runs it
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
};


}  // namespace tether_bench
