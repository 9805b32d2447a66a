#include "feedbench/plan/fio_jobs.h"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/io/skew.h"
#include "feedbench/io/workload.h"
#include "feedbench/results/result.h"

namespace feedbench {
namespace {

// fio refuses an option value longer than this (parse.c), so long file lists are split over
// several filename= lines, which fio adds up.
constexpr std::size_t kFioMaxValue = 4096;

// fio separates file names with ':'; a literal colon is written "\:".
std::string fio_escape(std::string_view path) {
  std::string out;
  for (char ch : path) {
    if (ch == ':') out += '\\';
    out += ch;
  }
  return out;
}

// filename= lines for `order` (FileSet indexes), names relative to directory=root.
std::string filename_lines(const FileSet& files, const std::vector<std::uint32_t>& order) {
  std::string out, line;
  for (std::uint32_t i : order) {
    std::string name = fio_escape(files.relative_path(i));
    if (!line.empty() && line.size() + 1 + name.size() >= kFioMaxValue - 16) {
      out += "filename=" + line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ':';
    line += name;
  }
  if (!line.empty()) out += "filename=" + line + "\n";
  return out;
}

std::string sanitise(const std::string& name) {
  std::string out;
  for (char ch : name) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-') ? ch : '_';
  return out;
}

// The order in which feedbench's first round of `c` opens the files: the Workload's own
// stream (its seeded shuffle for shuffled_files), one worker.
std::vector<std::uint32_t> file_order(const Case& c, const FileSet& files) {
  WorkloadSpec spec;
  spec.pattern = parse_pattern(c.str("pattern"));
  if (spec.pattern == Pattern::skewed) spec.skew = parse_skew(c.str("pattern"));  // the same draws
  spec.block_size = std::uint64_t(c.integer("block_size"));
  spec.workers = 1;
  spec.seed = c.seed;
  spec.round = 0;
  std::vector<std::uint32_t> order;
  order.reserve(files.size());
  Workload workload(files, spec);
  WorkItem item;
  while (workload.next(0, item))
    if (item.first_of_file) order.push_back(item.file);
  return order;
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
      << " bytes)\n# run: fio --output-format=json THIS_FILE  (read.bw_bytes, read.iops)\n";
  // thread + group_reporting: workers are threads and report as one, as in feedbench.
  // fadvise_hint=0: feedbench gives the kernel no access hints on measured files.
  job << "[global]\nthread\ngroup_reporting\ndirectory=" << fio_escape(files.root())
      << "\nrw=" << (pattern == "random" ? "randread" : "read") << "\nbs=" << bs << "\nioengine=" << engine
      << "\niodepth=" << qd << "\ndirect=" << (direct ? 1 : 0) << "\nfadvise_hint=0\n"
      << "# feedbench's read buffers are page-aligned; fio's are not for buffered I/O unless asked\n"
      << "mem_align=4096\n";
  if (state == "cold") {
    job << "# cold: fio evicts each file from the page cache as it opens it (invalidate=1);\n"
           "# feedbench evicts every file before its clock starts\ninvalidate=1\n";
  } else if (state == "warm") {
    job << "# warm: read every file into the page cache first, keep it there\ninvalidate=0\npre_read=1\n";
  }
  if (engine == "io_uring")
    job << "# feedbench registers its buffers and files too\nfixedbufs=1\nregisterfiles=1\n";
  std::vector<std::uint32_t> all(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) all[i] = std::uint32_t(i);
  if (pattern == "random") {
    // Every worker reads random blocks from all files, drawn with replacement (norandommap);
    // together one pass's worth of reads. fio picks files uniformly, feedbench by size: the
    // same where the files are of one size.
    job << "file_service_type=random\nnorandommap=1\nrandrepeat=1\nrandseed=" << c.seed << "\n"
        << "io_size=" << (files.total_bytes() / std::uint64_t(workers)) << "\n";
    job << "[random]\nnumjobs=" << workers << "\n" << filename_lines(files, all);
  } else {
    // Whole files, one at a time per worker, in feedbench's order (its seeded shuffle for
    // shuffled_files). feedbench hands the next file to whichever worker is free; fio needs a
    // fixed split, so files are dealt out in turn.
    const std::vector<std::uint32_t> order = file_order(c, files);
    job << "file_service_type=sequential\nopenfiles=1\n";
    for (long long w = 0; w < workers; ++w) {
      std::vector<std::uint32_t> mine;
      for (std::size_t i = std::size_t(w); i < order.size(); i += std::size_t(workers))
        mine.push_back(order[i]);
      if (mine.empty()) continue;
      job << "[worker" << w << "]\n" << filename_lines(files, mine);
    }
  }
  return job.str();
}

std::size_t write_fio_jobs(const Plan& plan, const FileSet* source, const FileSet* cache,
                           const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RunError("--emit-fio " + dir + ": " + ec.message());
  std::size_t n = 0;
  for (const Case& c : plan.cases) {
    if (c.family != "file_read") continue;
    const std::string role = c.str("path");
    const FileSet* files = role == "source" ? source : role == "cache" ? cache : nullptr;
    if (!files || files->empty()) continue;
    std::string name = dir + "/" + std::to_string(++n) + "-" + sanitise(c.name()) + ".fio";
    write_file_atomically(name, fio_job_for(c, *files));
  }
  return n;
}

}  // namespace feedbench
