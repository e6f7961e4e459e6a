// peers_asio.cpp: Boost.Asio — an io_context run by one thread, boost::asio::post, and a
// std::promise per answer (bench/asio_executor.h).
#include <vector>

#include "peer.h"

#ifdef COMPARE_HAVE_ASIO
#include <future>

#include "../asio_executor.h"

namespace compare {
namespace {

class Asio final : public Peer {
 public:
  int64_t call(int64_t x) override {
    std::promise<int64_t> p;
    std::future<int64_t> f = p.get_future();
    boost::asio::post(ex_.io(), [&p, x] { p.set_value(x + 1); });
    return f.get();
  }
  void burst(int64_t* xs, int n) override {
    std::vector<std::future<int64_t>> fs;
    fs.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::promise<int64_t> p;  // Asio handlers may be move-only: the promise moves in
      fs.push_back(p.get_future());
      boost::asio::post(ex_.io(), [p = std::move(p), x = xs[i]]() mutable { p.set_value(x + 1); });
    }
    for (int i = 0; i < n; ++i) xs[i] = fs[static_cast<size_t>(i)].get();
  }
  int64_t fire(int64_t n) override {
    for (int64_t i = 0; i < n; ++i) boost::asio::post(ex_.io(), [this] { ++count_; });
    std::promise<int64_t> p;
    std::future<int64_t> f = p.get_future();
    boost::asio::post(ex_.io(), [&p, this] { p.set_value(count_); });
    return f.get();
  }

 private:
  int64_t count_ = 0;  // the io_context thread's
  tether_bench::AsioExecutor ex_;
};

}  // namespace

void add_asio_peers(std::vector<PeerKind>& out) {
  out.push_back({"Boost.Asio io_context", kRoundTrip | kAfterIdle | kBurst | kFire,
                 [] { return std::unique_ptr<Peer>(new Asio); }});
}

}  // namespace compare
#else
void compare::add_asio_peers(std::vector<PeerKind>&) {}
#endif
