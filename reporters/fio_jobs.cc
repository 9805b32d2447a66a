#include "fio_jobs.h"

#include <filesystem>
#include <sstream>

#include "feedbench/error.h"
#include "feedbench/result.h"

namespace feedbench {
namespace {

// fio separates file names with ':'; a literal colon is written "\:".
std::string fio_escape(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == ':') out += '\\';
    out += ch;
  }
  return out;
}

std::string file_list(const FileSet& files, std::size_t first, std::size_t step) {
  std::string list;
  for (std::size_t i = first; i < files.size(); i += step) {
    if (!list.empty()) list += ':';
    list += fio_escape(files.absolute_path(i));
  }
  return list;
}

std::string sanitise(const std::string& name) {
  std::string out;
  for (char ch : name) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-') ? ch : '_';
  return out;
}

}  // namespace

std::string fio_job_for(const Case& c, const FileSet& files) {
  const std::string pattern = c.str("pattern"), engine = c.str("engine"), state = c.str("cache_state");
  const long long bs = c.integer("block_size"), qd = c.integer("queue_depth");
  const long long workers = c.integer("workers");
  const bool direct = state == "direct" || engine == "libaio";
  std::ostringstream job;
  job << "# fio equivalent of feedbench case\n#   " << c.name() << "\n"
      << "# data: " << files.root() << " (" << files.size() << " files, " << files.total_bytes()
      << " bytes)\n";
  job << "[global]\nthread\ngroup_reporting\nrw=" << (pattern == "random" ? "randread" : "read")
      << "\nbs=" << bs << "\nioengine=" << (engine == "io_uring" ? "io_uring" : engine)
      << "\niodepth=" << qd << "\ndirect=" << (direct ? 1 : 0) << "\n";
  if (state == "cold") {
    job << "# cold: fio evicts each file from the page cache before the job (invalidate=1)\ninvalidate=1\n";
  } else if (state == "warm") {
    job << "# warm: read every file into the page cache first, keep it there\ninvalidate=0\npre_read=1\n";
  }
  if (engine == "io_uring") job << "fixedbufs=1\nregisterfiles=1\n";
  if (pattern == "random") {
    // Every worker reads random blocks from all files; together one pass's worth of reads.
    job << "file_service_type=random\nrandrepeat=1\nrandseed=" << c.seed << "\n"
        << "io_size=" << (files.total_bytes() / std::uint64_t(workers)) << "\n";
    job << "[random]\nnumjobs=" << workers << "\nfilename=" << file_list(files, 0, 1) << "\n";
  } else {
    // Files are shared out between workers; each reads its files start to end, one at a time.
    job << "file_service_type=sequential\nopenfiles=1\n";
    for (long long w = 0; w < workers; ++w)
      job << "[worker" << w << "]\nfilename=" << file_list(files, std::size_t(w), std::size_t(workers))
          << "\n";
  }
  return job.str();
}

std::size_t write_fio_jobs(const Plan& plan, const RunContext& context, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RunError("--emit-fio " + dir + ": " + ec.message());
  std::size_t n = 0;
  for (const Case& c : plan.cases) {
    if (c.family != "file_read") continue;
    const FileSet* files = context.files_for(c.str("path"));
    if (!files) continue;
    std::string name = dir + "/" + std::to_string(++n) + "-" + sanitise(c.name()) + ".fio";
    write_file_atomically(name, fio_job_for(c, *files));
  }
  return n;
}

}  // namespace feedbench
