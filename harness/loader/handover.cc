// A batch handed over as PyTorch's worker processes hand one over (see handover.h).
#include "handover.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

// What a message carries beside the descriptor: the batch, the tensor's size and its place.
struct Header {
  std::uint64_t index = 0;
  std::uint64_t bytes = 0;
  std::uint64_t part = 0, parts = 1;
};

// One message of a header and room for one descriptor (SCM_RIGHTS), as sent and as received.
// Not copied: msg points into it.
struct FdMessage {
  Header header;
  iovec iov{&header, sizeof header};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  FdMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;
};

[[noreturn]] void fail(const char* what) {
  throw RunError(errno_message(std::string("batch hand-over: ") + what, errno));
}

}  // namespace

SharedTensor::SharedTensor(UniqueFd fd, std::size_t bytes) : fd_(std::move(fd)), size_(bytes) {
  if (size_ == 0) return;
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_.get(), 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    fail("mmap");
  }
}

SharedTensor::SharedTensor(SharedTensor&& o) noexcept : fd_(std::move(o.fd_)), map_(o.map_), size_(o.size_) {
  o.map_ = nullptr;
  o.size_ = 0;
}

SharedTensor& SharedTensor::operator=(SharedTensor&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::move(o.fd_);
    map_ = o.map_;
    size_ = o.size_;
    o.map_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

SharedTensor::~SharedTensor() { release(); }

void SharedTensor::release() {
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
  size_ = 0;
  fd_.reset();  // the last reference: the buffer's pages are freed
}

BatchChannel::BatchChannel() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) fail("socketpair");
  worker_end_ = UniqueFd(sv[0]);
  trainer_end_ = UniqueFd(sv[1]);
}

std::size_t BatchChannel::send(std::size_t j, std::span<const std::span<const std::byte>> samples,
                               bool list) {
  std::size_t total = 0;
  if (list && !samples.empty()) {
    for (std::size_t k = 0; k < samples.size(); ++k)
      total += send_tensor(j, k, samples.size(), samples.subspan(k, 1));
  } else {
    total = send_tensor(j, 0, 1, samples);
  }
  ++sent_;
  return total;
}

std::size_t BatchChannel::send_tensor(std::size_t j, std::size_t part, std::size_t parts,
                                      std::span<const std::span<const std::byte>> parts_of) {
  std::size_t total = 0;
  for (const auto& s : parts_of) total += s.size();
  UniqueFd fd(::memfd_create("feedbench-batch", MFD_CLOEXEC));
  if (!fd) fail("memfd_create");
  if (total > 0) {
    if (::ftruncate(fd.get(), off_t(total)) != 0) fail("ftruncate");
    void* map = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) fail("mmap");
    auto* out = static_cast<std::byte*>(map);
    for (const auto& s : parts_of) {
      if (!s.empty()) std::memcpy(out, s.data(), s.size());
      out += s.size();
    }
    ::munmap(map, total);
  }
  FdMessage m;
  m.header = {j, total, part, parts};
  msghdr& msg = m.msg;
  const Header& h = m.header;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  const int raw = fd.get();
  std::memcpy(CMSG_DATA(c), &raw, sizeof raw);
  ssize_t n;
  do n = ::sendmsg(worker_end_.get(), &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != ssize_t(sizeof h)) fail("sendmsg");
  return total;  // `fd` closes here: the message holds the buffer now
}

SharedBatch BatchChannel::receive(std::size_t j) {
  for (;;) {
    if (auto it = arrived_.find(j); it != arrived_.end() && it->second.size() == it->second.front().parts) {
      std::vector<Arrived> got = std::move(it->second);
      arrived_.erase(it);
      std::sort(got.begin(), got.end(), [](const Arrived& a, const Arrived& b) { return a.part < b.part; });
      std::vector<SharedTensor> tensors;
      tensors.reserve(got.size());
      for (Arrived& a : got) tensors.emplace_back(std::move(a.fd), a.bytes);
      ++received_;
      return SharedBatch(std::move(tensors));
    }
    if (!receive_one()) return {};  // stopped
  }
}

bool BatchChannel::receive_one() {
  FdMessage m;
  msghdr& msg = m.msg;
  const Header& h = m.header;
  ssize_t n;
  do n = ::recvmsg(trainer_end_.get(), &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n == 0) return false;
  if (n != ssize_t(sizeof h)) fail("recvmsg");
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) throw RunError("batch hand-over: a message without its descriptor");
  int raw = -1;
  std::memcpy(&raw, CMSG_DATA(c), sizeof raw);
  arrived_[std::size_t(h.index)].push_back(Arrived{UniqueFd(raw), std::size_t(h.bytes), std::size_t(h.part),
                                                   std::size_t(std::max<std::uint64_t>(h.parts, 1))});
  return true;
}

void BatchChannel::stop() { ::shutdown(worker_end_.get(), SHUT_RDWR); }

}  // namespace feedbench
