// What a watched job read, from its read recorder's files (harness/watch/preload/read_recorder.cc,
// record format version 2): one `reads-PID.txt` per process (the images one pid ran, a launcher
// and the job it exec'd, told apart by their image number), a line per file it closed (F), and
// with a trace a line per open (O) and per read (R). Read back here line by line into bounded
// summaries: the job's data folders (resolved paths, the device under each), its code and
// libraries apart, and for the trace each process's opens and reads in turn.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace feedbench {

// Version 2 added each record's process image (a pid's opens are numbered afresh after an exec).
inline constexpr int kReadLogVersion = 2;

// One file a process opened and closed (or held open at its end).
struct FileRecord {
  std::int64_t pid = 0, image = 0, tid = 0, open_ns = 0, first_ns = 0,
               last_ns = 0;  // first/last 0: never read
  std::uint64_t bytes = 0, reads = 0, size = 0;
  std::uint32_t dev_major = 0, dev_minor = 0;
  std::uint64_t inode = 0;
  std::string path;  // decoded
};

// With a trace: an open (its serial is unique within the process image) and a read of it.
struct OpenRecord {
  std::int64_t pid = 0, image = 0;
  std::uint64_t serial = 0;
  std::int64_t open_ns = 0;
  std::uint64_t size = 0;
  std::string path;
};
struct ReadRecord {
  std::int64_t pid = 0, image = 0, tid = 0;
  std::uint64_t serial = 0;
  std::int64_t t0_ns = 0, t1_ns = 0, offset = 0, bytes = 0;
};

// RETURNS: whether `path` is the job's code or its libraries rather than its data: under a
// system folder (/usr/, /lib/, /etc/, /dev/ but /dev/shm/, /opt/conda/...), a Python source,
// compiled module or shared object anywhere, a .pth file in a site-packages folder.
bool is_code_path(const std::string& path);

// RETURNS: whether `path` is the kernel's (/proc/, /sys/): neither data nor code, not counted.
bool is_kernel_path(const std::string& path);

// The job's reads by folder, bounded: at most kMaxFolders folders, the rest together.
struct ReadSummary {
  struct Folder {
    std::string path;  // the folder, as the kernel resolved it
    std::uint32_t dev_major = 0, dev_minor = 0;
    std::uint64_t files = 0, bytes = 0, reads = 0;  // files: opens
    std::int64_t first_ns = 0, last_ns = 0;
  };
  static constexpr std::size_t kMaxFolders = 4096;
  std::vector<Folder> folders;                    // the data folders, most bytes first
  Folder other;                                   // data folders past the bound, together (path "")
  Folder code;                                    // the job's code and libraries, together (is_code_path)
  std::uint64_t files = 0, bytes = 0, reads = 0;  // the data's
  std::uint64_t processes = 0, torn_lines = 0;
  // Per window asked for: the data bytes of the files first read inside it.
  std::vector<std::uint64_t> window_bytes;
};

// A folder a job's data came from, with the data folders beneath it summarised: what a person
// calls the data set (an ImageFolder's train/ and its 1,000 class folders), not each folder.
struct DataRoot {
  std::string path;
  std::uint32_t dev_major = 0, dev_minor = 0;                  // the device of its folder read most
  std::uint64_t folders = 0, files = 0, bytes = 0, reads = 0;  // the data folders beneath it, theirs
};

// The data folders of a summary gathered under their roots.
struct DataRoots {
  std::vector<DataRoot> roots;  // most bytes first
  DataRoot elsewhere;           // folders under no root (path ""): a config read beside, past the bound
};

// RETURNS: the roots of `s`'s data folders: the folders holding 99% of the data's bytes (most first)
// gathered, each under the deepest folder it shares with the others below '/' (one data set read
// in two places is two roots); every data folder beneath a root counted in it, the rest elsewhere.
DataRoots data_roots(const ReadSummary& s);

// A span of CLOCK_MONOTONIC time, [from_ns, to_ns).
struct TimeWindow {
  std::int64_t from_ns = 0, to_ns = 0;
};

// Calls the visitor for each record of one process's file, read from `in` line by line (a
// trace's file may be large), in order. A last line without its
// newline is a process killed mid-write: counted in *torn, not visited. Throws InputError naming
// `name` and the line for a malformed line.
struct ReadLogVisitor {
  std::function<void(const FileRecord&)> file;
  std::function<void(const OpenRecord&)> open;
  std::function<void(const ReadRecord&)> read;
};
void parse_read_log(const std::string& name, std::istream& in, const ReadLogVisitor& visit,
                    std::uint64_t* torn);

// RETURNS: the paths of the recorder's files under `dir` ("reads-*.txt"), sorted.
std::vector<std::string> read_log_files(const std::string& dir);

// RETURNS: the summary of the files under `dir`, with the data bytes first read in each of
// `windows` (a DataLoader pass each). Throws InputError as parse_read_log does.
ReadSummary read_summary(const std::string& dir, const std::vector<TimeWindow>& windows = {});

// What watch's guests (the read recorder, the Python probe) could not record, from the counters
// file they share with the watcher (guest_counters.h).
struct LostRecords {
  std::uint64_t no_space = 0, refused = 0, other = 0;  // records lost, by why
  std::uint64_t unrecorded_calls = 0;  // calls made inside the recorder (a signal handler's), not recorded
  std::optional<std::uint32_t> refused_uid;  // the effective user last refused, when one was
  std::uint64_t total() const { return no_space + refused + other; }
};

// RETURNS: the counts of the counters file's `bytes` (guest_counters::kBytes of them; fewer:
// nothing counted).
LostRecords lost_records(const std::string& bytes);

// RETURNS: the console's words on `lost`: "" when nothing was lost or left unrecorded, else a
// line naming how many records and why (two, joined by "\n  ", when calls went unrecorded too).
std::string lost_records_text(const LostRecords& lost);

}  // namespace feedbench
