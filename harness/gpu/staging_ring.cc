// The staging ring's logic and the host stand-ins for a copy engine and a device step: they run
// on any machine, so slot reuse, ordering, back-pressure and accounting are tested without a GPU.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "feedbench/base/clock.h"
#include "feedbench/base/error.h"
#include "feedbench/gpu/gpu.h"

namespace feedbench {

void SinkStats::merge(const SinkStats& other) {
  bytes += other.bytes;
  copies += other.copies;
  copy_ns.merge(other.copy_ns);
  blocked_ns += other.blocked_ns;
}

StagingRing::StagingRing(CopyEngine& engine) : engine_(engine), busy_(engine.slots(), false) {
  FB_CHECK(engine.slots() >= 1 && engine.slot_bytes() >= 1, "a staging ring needs a slot");
}

StagingRing::~StagingRing() {
  // Copies still in flight read the staging slots: wait for them before the engine goes.
  try {
    drain();
  } catch (const RunError&) {
  }
}

void StagingRing::retire(std::size_t slot, bool blocking) {
  if (!busy_[slot]) return;
  const std::int64_t t0 = blocking ? now_ns() : 0;
  const std::int64_t took = engine_.wait(slot);
  if (blocking) stats_.blocked_ns += now_ns() - t0;
  busy_[slot] = false;
  stats_.copy_ns.record(std::uint64_t(std::max<std::int64_t>(0, took)));
}

void StagingRing::push(std::span<const std::byte> data) {
  const std::size_t cap = engine_.slot_bytes();
  while (!data.empty()) {
    const std::size_t n = std::min(cap, data.size());
    const std::size_t slot = next_;
    next_ = (next_ + 1) % busy_.size();
    // The oldest slot: when its copy is still running, every slot is busy and the copy engine,
    // not the reader, sets the pace.
    retire(slot, !engine_.idle(slot));
    std::memcpy(engine_.host_slot(slot), data.data(), n);
    engine_.start_copy(slot, n);
    busy_[slot] = true;
    stats_.bytes += n;
    ++stats_.copies;
    data = data.subspan(n);
  }
}

void StagingRing::drain() {
  // Oldest first, so copy times are recorded in push order.
  for (std::size_t k = 0; k < busy_.size(); ++k) retire((next_ + k) % busy_.size(), false);
}

void StagingRing::reset_stats() { stats_ = SinkStats{}; }

namespace {

// A thread that runs tasks in submission order: the stand-in's copy engine or device.
class HostStream {
 public:
  HostStream() : thread_([this] { loop(); }) {}
  ~HostStream() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // RETURNS: the task's ticket; done(ticket) once it ran.
  std::uint64_t submit(std::function<void()> task) {
    std::lock_guard lock(m_);
    tasks_.push_back(std::move(task));
    cv_.notify_all();
    return ++submitted_;
  }
  bool done(std::uint64_t ticket) {
    std::lock_guard lock(m_);
    return completed_ >= ticket;
  }
  void wait(std::uint64_t ticket) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return completed_ >= ticket; });
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    while (true) {
      cv_.wait(lock, [&] { return quit_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      ++completed_;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::uint64_t submitted_ = 0, completed_ = 0;
  bool quit_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

void spin_until(std::int64_t deadline) {
  while (now_ns() < deadline) {
    if (deadline - now_ns() > 200'000) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

class HostCopyEngine final : public CopyEngine {
 public:
  HostCopyEngine(std::size_t slots, std::size_t slot_bytes, std::int64_t delay_ns, double rate,
                 std::vector<std::byte>* log)
      : slot_bytes_(slot_bytes), host_(slots * slot_bytes), device_(slots * slot_bytes), tickets_(slots, 0),
        took_(slots, 0), delay_ns_(delay_ns), rate_(rate), log_(log) {}
  ~HostCopyEngine() override {
    stream_.reset();  // runs what is queued, then stops
  }
  std::size_t slots() const override { return tickets_.size(); }
  std::size_t slot_bytes() const override { return slot_bytes_; }
  std::byte* host_slot(std::size_t slot) override { return host_.data() + slot * slot_bytes_; }
  void start_copy(std::size_t slot, std::size_t bytes) override {
    FB_CHECK(slot < slots() && bytes <= slot_bytes_, "copy within a slot");
    FB_CHECK(idle(slot), "one copy in flight per slot");
    tickets_[slot] = stream_->submit([this, slot, bytes] {
      const std::int64_t t0 = now_ns();
      std::memcpy(device_.data() + slot * slot_bytes_, host_slot(slot), bytes);
      if (log_ && bytes > 0) log_->push_back(device_[slot * slot_bytes_]);
      std::int64_t cost = delay_ns_;
      if (rate_ > 0) cost += std::int64_t(double(bytes) / rate_ * 1e9);
      spin_until(t0 + cost);
      took_[slot] = now_ns() - t0;
    });
  }
  std::int64_t wait(std::size_t slot) override {
    if (tickets_[slot] == 0) return 0;
    stream_->wait(tickets_[slot]);
    tickets_[slot] = 0;
    return took_[slot];
  }
  bool idle(std::size_t slot) override { return tickets_[slot] == 0 || stream_->done(tickets_[slot]); }

 private:
  std::size_t slot_bytes_;
  std::vector<std::byte> host_, device_;
  std::vector<std::uint64_t> tickets_;
  std::vector<std::int64_t> took_;  // written by the stream before it marks the ticket done
  std::int64_t delay_ns_;
  double rate_;
  std::vector<std::byte>* log_;
  std::unique_ptr<HostStream> stream_ = std::make_unique<HostStream>();
};

class HostDeviceStep final : public DeviceStep {
 public:
  HostDeviceStep(std::uint64_t max_batch_bytes, bool overlap)
      : host_(max_batch_bytes), device_(max_batch_bytes), overlap_(overlap) {}
  ~HostDeviceStep() override { stream_.reset(); }
  void step(std::uint64_t batch_bytes, std::int64_t step_ns) override {
    if (batch_bytes > host_.size())
      throw RunError("a batch of " + std::to_string(batch_bytes) +
                     " bytes is larger than the device step's buffers");
    // One thread plays both streams, so the stand-in's copy runs after the previous spin; what
    // overlap changes here, as on a GPU, is that the trainer fetches its next batch meanwhile.
    std::int64_t copy_took = 0;
    const std::uint64_t copied = stream_->submit([&, batch_bytes] {
      const std::int64_t t0 = now_ns();
      std::memcpy(device_.data(), host_.data(), batch_bytes);
      copy_took = now_ns() - t0;
    });
    if (overlap_ && last_kernel_) stream_->wait(last_kernel_);
    stream_->wait(copied);
    stats_.bytes += batch_bytes;
    ++stats_.copies;
    stats_.copy_ns.record(std::uint64_t(copy_took));
    last_kernel_ = stream_->submit([this, step_ns] {
      const std::int64_t t0 = now_ns();
      spin_until(t0 + step_ns);
      busy_ns_ += now_ns() - t0;
    });
    if (!overlap_) finish();
  }
  void finish() override {
    if (last_kernel_) stream_->wait(last_kernel_);
    last_kernel_ = 0;
  }
  const SinkStats& copy_stats() const override { return stats_; }
  std::int64_t device_busy_ns() const override { return busy_ns_; }

 private:
  std::vector<std::byte> host_, device_;
  bool overlap_;
  SinkStats stats_;
  std::int64_t busy_ns_ = 0;  // written on the stream, read after a wait
  std::uint64_t last_kernel_ = 0;
  std::unique_ptr<HostStream> stream_ = std::make_unique<HostStream>();
};

}  // namespace

std::unique_ptr<CopyEngine> make_host_copy_engine(std::size_t slots, std::size_t slot_bytes,
                                                  std::int64_t delay_ns, double bytes_per_second,
                                                  std::vector<std::byte>* device_log) {
  FB_CHECK(slots >= 1 && slot_bytes >= 1, "a copy engine needs a slot");
  return std::make_unique<HostCopyEngine>(slots, slot_bytes, delay_ns, bytes_per_second, device_log);
}

std::unique_ptr<DeviceStep> make_host_device_step(std::uint64_t max_batch_bytes, bool overlap) {
  return std::make_unique<HostDeviceStep>(max_batch_bytes, overlap);
}

}  // namespace feedbench
