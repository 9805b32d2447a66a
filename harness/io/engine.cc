// The Engine base (aligned slot buffers) and the engine registry. Each engine lives in its own
// file under harness/io/engines/.
#include "feedbench/io/engine.h"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "engines/engines.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/dataset/data_file.h"
#include "feedbench/io/throttle.h"

namespace feedbench {
namespace {

// Page alignment satisfies O_DIRECT on every block device and keeps slots off each other's
// cache lines and pages.
constexpr std::size_t kAlign = kDirectAlignment;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

Engine::Engine(const EngineOptions& options) : options_(options) {
  stride_ = round_up(options.block_size == 0 ? 1 : options.block_size, kAlign);
  if (!options.slot_buffers) return;  // writes only: from the caller's memory
  const std::size_t slots = options.queue_depth == 0 ? 1 : options.queue_depth;
  // One allocation for all slots, made before any measured read.
  try {
    buffers_ = AlignedBuffer(stride_ * slots, kAlign);
  } catch (const std::bad_alloc&) {
    throw RunError("cannot allocate " + std::to_string(stride_ * slots) + " bytes of read buffers");
  }
}

std::size_t Engine::reap(std::span<Completion> out, std::size_t min_complete) {
  const std::size_t n = collect(out, min_complete);
  if (options_.throttle) {
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (out[i].result > 0) bytes += std::uint64_t(out[i].result);
    if (bytes > 0) options_.throttle->acquire(bytes);
  }
  return n;
}

void Engine::submit_writes(std::span<const WriteOp>) {
  throw std::logic_error(std::string(name()) + " does not write");
}

void Engine::submit_whole_files(std::span<const WholeFileRead>) {
  throw std::logic_error(std::string(name()) + " does not read whole files in one request");
}

namespace {

[[noreturn]] void open_failed(const std::string& path, bool direct, const DataFile& f) {
  if (direct && f.error == EINVAL)
    throw RunError("O_DIRECT not supported by " + file_system_at(path) + " at " + path);
  throw RunError(f.reason(path));
}

}  // namespace

int Engine::open_for_read(const std::string& path, bool direct) {
  const bool beneath = options_.beneath_fd >= 0;
  const DataFile f = open_data_file(beneath ? options_.beneath_fd : AT_FDCWD, path,
                                    {.direct = direct, .noatime = try_noatime_, .beneath = beneath});
  if (!f.ok()) open_failed(path, direct, f);
  if (f.noatime) {
    ++open_counts_.noatime;
  } else {
    try_noatime_ = false;  // refused once (EPERM): the data set's files share an owner
    ++open_counts_.plain;
  }
  return f.fd;
}

std::vector<std::string> engine_names() { return {"psync", "mmap", "libaio", "io_uring"}; }

std::unique_ptr<Engine> make_engine(std::string_view name, const EngineOptions& options) {
  if (options.queue_depth == 0) throw InputError("queue_depth must be at least 1");
  if (options.block_size == 0) throw InputError("block_size must be at least 1 byte");
  if (options.block_size > (std::size_t(1) << 31))
    throw InputError("block_size must be at most 2GiB (one read call)");
  if (name == "psync") return engines::make_psync(options);
  if (name == "mmap") return engines::make_mmap(options);
  if (name == "libaio") return engines::make_libaio(options);
  if (name == "io_uring") return engines::make_io_uring(options);
  std::string known;
  for (const auto& n : engine_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown engine '" + std::string(name) + "' (expected one of: " + known + ")");
}

}  // namespace feedbench
