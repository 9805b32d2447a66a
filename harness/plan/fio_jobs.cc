#include "feedbench/plan/fio_jobs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/io/skew.h"
#include "feedbench/io/workload.h"
#include "feedbench/results/result.h"

namespace feedbench {
namespace {

// fio refuses an option value longer than this (parse.c), so long file lists are split over
// several filename= lines, which fio adds up. It is also fio's buffer for a file's whole path
// (directory= and the name, filesetup.c), which it does not check.
constexpr std::size_t kFioMaxValue = 4096;

// What fio strips from the ends of a line and of an option's value (parse.c strip_blank_*).
bool fio_blank(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return std::isspace(c) || std::iscntrl(c);
}

// `text` with '\' and '"' and every control character escaped as C writes them.
std::string c_escaped(std::string_view text) {
  std::string out;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '\\' || ch == '"') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (std::iscntrl(c)) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

// `text` for a comment line: unchanged where it holds no control character, else quoted and
// escaped, so that no new line ends the comment and starts an option.
std::string comment_text(std::string_view text) {
  for (char ch : text)
    if (std::iscntrl(static_cast<unsigned char>(ch))) return "\"" + c_escaped(text) + "\"";
  return std::string(text);
}

// fio separates file names (and directory= entries) with ':'; a literal colon is written "\:".
std::string fio_escape(std::string_view path) {
  std::string out;
  for (char ch : path) {
    if (ch == ':') out += '\\';
    out += ch;
  }
  return out;
}

// directory=`root` as fio reads it back (REQUIRES: fio_cannot_hold found nothing in it): a
// root ending in a blank gets "/." after it, or fio would strip the blank.
std::string fio_directory(const std::string& root) {
  std::string out = fio_escape(root);
  if (!out.empty() && fio_blank(out.back())) out += "/.";
  return out;
}

// A name of a ':'-separated list as fio reads it back (REQUIRES: fio_cannot_hold found nothing
// in it): a name starting with a blank gets "./" before it, or fio would strip the blank where
// the name comes first on its line (the name is relative to directory=, so "./" names the same
// file).
std::string fio_name(std::string_view relative) {
  std::string out = fio_escape(relative);
  if (!out.empty() && fio_blank(out.front())) out.insert(0, "./");
  return out;
}

// filename= lines for `order` (FileSet indexes), names relative to directory=root.
// REQUIRES: fio_cannot_hold found nothing in any of them.
std::string filename_lines(const FileSet& files, const std::vector<std::uint32_t>& order) {
  std::string out, line;
  auto end_line = [&] {
    if (line.empty()) return;
    // fio strips blanks from a line's end: a last name ending in one is followed by an empty
    // name, which fio skips.
    if (fio_blank(line.back())) line += ':';
    out += "filename=" + line + "\n";
    line.clear();
  };
  for (std::uint32_t i : order) {
    std::string name = fio_name(files.relative_path(i));
    if (!line.empty() && line.size() + 1 + name.size() >= kFioMaxValue - 16) end_line();
    if (!line.empty()) line += ':';
    line += name;
    // A '\' before the separating ':' would read as "\:", a colon inside the name: a name ending
    // in '\' ends its line instead (fio adds the lines up).
    if (line.back() == '\\') end_line();
  }
  end_line();
  return out;
}

// The files of `files` whose names fio can hold, in index order; those it cannot, with why,
// go to `left_out`.
struct LeftOutFile {
  std::uint32_t file;
  std::string why;
};
std::vector<std::uint32_t> files_fio_holds(const FileSet& files, std::vector<LeftOutFile>& left_out) {
  std::vector<std::uint32_t> held;
  held.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string why = fio_cannot_hold(files.root(), files.relative_path(i));
    if (why.empty()) held.push_back(std::uint32_t(i));
    else left_out.push_back({std::uint32_t(i), std::move(why)});
  }
  return held;
}

// Comment lines naming the files left out of a job, and why (the first few of them).
std::string left_out_note(const FileSet& files, const std::vector<LeftOutFile>& left_out) {
  if (left_out.empty()) return {};
  constexpr std::size_t kListed = 10;
  std::string out = "# left out: " + std::to_string(left_out.size()) + " of " +
                    plural(files.size(), "file", "files") + ", whose names fio's job files cannot hold:\n";
  for (std::size_t k = 0; k < left_out.size() && k < kListed; ++k)
    out += "#   \"" + c_escaped(files.relative_path(left_out[k].file)) + "\": " + left_out[k].why + "\n";
  if (left_out.size() > kListed) out += "#   and " + std::to_string(left_out.size() - kListed) + " more\n";
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
  spec.pattern = c.file_read().pattern.pattern;
  spec.skew = c.file_read().pattern.skew;  // the same draws
  spec.block_size = c.file_read().block_size;
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

std::string fio_cannot_hold(std::string_view root, std::string_view relative) {
  for (std::string_view name : {root, relative}) {
    if (name.find('\n') != std::string_view::npos)
      return "a new line (fio reads a job file line by line and has no escape for one)";
    if (name.find_first_of(";#") != std::string_view::npos)
      return "';' or '#' (fio cuts the line there, as a comment)";
    if (name.find("${") != std::string_view::npos)
      return "\"${\" (fio puts an environment variable in place of ${NAME})";
    for (const char* word : {"$pagesize", "$mb_memory", "$ncpus"})
      if (name.find(word) != std::string_view::npos)
        return std::string("\"") + word + "\" (fio puts a number in its place)";
  }
  // Room for the quoting ("./", "/.", ':') and the '/' between.
  if (root.size() + relative.size() + 8 >= kFioMaxValue - 16)
    return "a path longer than fio can hold (4,096 characters)";
  return {};
}

std::string fio_job_for(const Case& c, const FileSet& files) {
  const FileReadParameters& p = c.file_read();
  const bool random = p.pattern.pattern == Pattern::random;
  const std::string &engine = p.engine, &state = p.cache_state;
  const long long bs = static_cast<long long>(p.block_size), qd = p.queue_depth;
  const long long workers = p.workers;
  const bool direct = state == "direct" || engine == "libaio";
  // A name fio would read as another, or as more than a name (a new line starts an option,
  // such as exec_prerun=), is left out, with a note.
  std::vector<LeftOutFile> left_out;
  const std::vector<std::uint32_t> held = files_fio_holds(files, left_out);
  if (held.empty()) return {};  // fio would make up files of its own for a job without names
  std::ostringstream job;
  job << "# fio equivalent of feedbench case\n#   " << comment_text(c.name()) << "\n"
      << "# data: " << comment_text(files.root()) << " (" << files.size() << " files, " << files.total_bytes()
      << " bytes)\n# run: fio --output-format=json THIS_FILE  (read.bw_bytes, read.iops)\n"
      << left_out_note(files, left_out);
  // thread + group_reporting: workers are threads and report as one, as in feedbench.
  // fadvise_hint=0: feedbench gives the kernel no access hints on measured files.
  job << "[global]\nthread\ngroup_reporting\ndirectory=" << fio_directory(files.root())
      << "\nrw=" << (random ? "randread" : "read") << "\nbs=" << bs << "\nioengine=" << engine
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
  if (random) {
    // Every worker reads random blocks from all files, drawn with replacement (norandommap);
    // together one pass's worth of reads (of the files it holds). fio picks files uniformly,
    // feedbench by size: the same where the files are of one size.
    std::uint64_t bytes = 0;
    for (std::uint32_t i : held) bytes += files.file_size(i);
    job << "file_service_type=random\nnorandommap=1\nrandrepeat=1\nrandseed=" << c.seed << "\n"
        << "io_size=" << (bytes / std::uint64_t(workers)) << "\n";
    job << "[random]\nnumjobs=" << workers << "\n" << filename_lines(files, held);
  } else {
    // Whole files, one at a time per worker, in feedbench's order (its seeded shuffle for
    // shuffled_files). feedbench hands the next file to whichever worker is free; fio needs a
    // fixed split, so files are dealt out in turn.
    std::vector<bool> holds(files.size(), false);
    for (std::uint32_t i : held) holds[i] = true;
    std::vector<std::uint32_t> order = file_order(c, files);
    std::erase_if(order, [&](std::uint32_t i) { return !holds[i]; });
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

FioJobsWritten write_fio_jobs(const Plan& plan, const FileSet* source, const FileSet* cache,
                              const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RunError("--emit-fio " + dir + ": " + ec.message());
  FioJobsWritten written;
  std::vector<const FileSet*> counted;  // each data set's left-out files once, however many jobs
  for (const Case& c : plan.cases) {
    if (c.family != "file_read") continue;
    const std::string& role = c.file_read().path;
    const FileSet* files = role == "source" ? source : role == "cache" ? cache : nullptr;
    if (!files || files->empty()) continue;
    if (std::find(counted.begin(), counted.end(), files) == counted.end()) {
      counted.push_back(files);
      std::vector<LeftOutFile> left_out;
      files_fio_holds(*files, left_out);
      if (!left_out.empty() && written.files_left_out == 0) {
        written.first_left_out = files->relative_path(left_out[0].file);
        written.first_why = left_out[0].why;
      }
      written.files_left_out += left_out.size();
    }
    const std::string job = fio_job_for(c, *files);
    if (job.empty()) continue;
    std::string name = dir + "/" + std::to_string(++written.jobs) + "-" + sanitise(c.name()) + ".fio";
    write_file_atomically(name, job);
  }
  return written;
}

std::string fio_left_out_warning(const FioJobsWritten& written) {
  if (written.files_left_out == 0) return {};
  return "--emit-fio: " + plural(written.files_left_out, "file", "files") +
         " left out of the fio jobs: fio's job files cannot hold " +
         (written.files_left_out == 1 ? "its name" : "their names") + "; the first: \"" +
         c_escaped(written.first_left_out) + "\": " + written.first_why;
}

}  // namespace feedbench
