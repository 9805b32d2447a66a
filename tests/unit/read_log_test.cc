// What a watched job read, as its read recorder wrote it: the records parsed (paths %XX-decoded,
// a torn last line counted, a malformed one named by file and line), the data folders summarised
// with the code apart and bounded, and the trace placing each read in the batch whose fetch it
// fell in.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "feedbench/base/error.h"
#include "feedbench/watch/guest_counters.h"
#include "feedbench/watch/job_log.h"
#include "feedbench/watch/job_result.h"
#include "feedbench/watch/job_trace.h"
#include "feedbench/watch/read_log.h"
#include "test_util.h"

namespace feedbench {
namespace {

std::vector<FileRecord> files_of(const std::string& text, std::uint64_t* torn) {
  std::vector<FileRecord> out;
  std::istringstream in(text);
  ReadLogVisitor v;
  v.file = [&](const FileRecord& r) { out.push_back(r); };
  parse_read_log("reads-7.txt", in, v, torn);
  return out;
}

TEST(ReadLogTest, ParsesFileRecordsDecodingPathsAndCountsATornLastLine) {
  std::uint64_t torn = 0;
  const auto f = files_of(
      "F 7 1 8 100 110 190 4096 2 4096 7 0 12 /data/a%20b%25.bin\n"
      "F 7 1 8 200 0 0 0 0 10 7 0 13 /data/unread\n"
      "F 7 1 8 300 310",
      &torn);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].path, "/data/a b%.bin");
  EXPECT_EQ(f[0].bytes, 4096u);
  EXPECT_EQ(f[0].reads, 2u);
  EXPECT_EQ(f[0].dev_major, 7u);
  EXPECT_EQ(f[0].inode, 12u);
  EXPECT_EQ(torn, 1u);
}

TEST(ReadLogTest, AMalformedLineIsAnInputErrorNamingFileAndLine) {
  for (const std::string bad :
       {"F 7 1 8 100 110 190 x 2 4096 7 0 12 /p\n", "Q 1 2\n", "F 7 1 8 100\n", "R 7 1 8 1 50 40 0 10\n",
        "R 7 1 8 1 40 50 0 10 extra\n", "F 7 1 8 -1 0 0 0 0 0 0 0 0 /p\n", "O 7 1 1 10 5 /bad%4\n", "x\n"}) {
    std::uint64_t torn = 0;
    try {
      files_of("F 7 1 8 100 110 190 1 1 1 7 0 12 /ok\n" + bad, &torn);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("reads-7.txt:2"), std::string::npos) << e.what();
    }
  }
}

TEST(ReadLogTest, CodeAndLibrariesAreToldApartFromData) {
  EXPECT_TRUE(is_code_path("/usr/lib/python3.11/os.py"));
  EXPECT_TRUE(is_code_path("/home/me/venv/lib/site-packages/torch/_C.cpython-311-x86_64-linux-gnu.so"));
  EXPECT_TRUE(is_code_path("/home/me/proj/__pycache__/train.cpython-311.pyc"));
  EXPECT_TRUE(is_code_path("/opt/libfoo.so.1"));
  EXPECT_FALSE(is_code_path("/data/imagenet/train/n01440764/a.JPEG"));
  EXPECT_FALSE(is_code_path("/mnt/shards/shard-00001.tfrecord"));
  EXPECT_FALSE(is_code_path("/dev/shm/staged/a.bin"));            // data staged in memory
  EXPECT_FALSE(is_code_path("/data/features/sample-00017.pth"));  // PyTorch's tensor files
  EXPECT_TRUE(is_code_path("/venv/lib/python3.11/site-packages/distutils-precedence.pth"));
  EXPECT_TRUE(is_kernel_path("/proc/thread-self/schedstat"));
  EXPECT_FALSE(is_kernel_path("/data/proc/a.bin"));
}

TEST(ReadLogTest, SummaryByFolderMostBytesFirstCodeApartBounded) {
  testing::TempDir dir;
  std::string text;
  text += "F 7 1 7 1 2 3 100 1 100 7 0 1 /data/small/a\n";
  text += "F 7 1 7 1 2 3 900 2 900 7 0 2 /data/big/b\n";
  text += "F 7 1 7 1 2 3 800 2 800 7 0 3 /data/big/c\n";
  text += "F 7 1 7 1 0 0 0 0 800 7 0 4 /data/big/never-read\n";
  text += "F 7 1 7 1 2 3 5000 1 5000 254 1 5 /usr/lib/python3.11/os.py\n";
  // Folders past the bound are counted together.
  for (std::size_t i = 0; i < ReadSummary::kMaxFolders + 3; ++i)
    text += "F 8 1 8 1 2 3 1 1 1 7 0 9 /many/d" + std::to_string(i) + "/f\n";
  testing::write_file(dir.path() + "/reads-7.txt", text);
  testing::write_file(dir.path() + "/other.jsonl", "{}\n");  // the probe's, not the recorder's
  const ReadSummary s = read_summary(dir.path());
  EXPECT_EQ(s.processes, 1u);
  ASSERT_EQ(s.folders.size(), ReadSummary::kMaxFolders);
  EXPECT_EQ(s.folders[0].path, "/data/big");
  EXPECT_EQ(s.folders[0].files, 2u);  // the file never read is not counted
  EXPECT_EQ(s.folders[0].bytes, 1700u);
  EXPECT_EQ(s.folders[1].path, "/data/small");
  EXPECT_EQ(s.code.bytes, 5000u);
  EXPECT_EQ(s.other.files, 5u);  // 4096 + 3 + 2 folders, 4096 kept
  EXPECT_EQ(s.files, 3u + ReadSummary::kMaxFolders + 3);
  EXPECT_EQ(s.bytes, 1800u + ReadSummary::kMaxFolders + 3);
}

// An ImageFolder tree is one data set, not a folder per class: its class folders gathered under
// the folder they share, a small read elsewhere (a config) kept out of it, another tree apart.
TEST(ReadLogTest, DataFoldersAreGatheredUnderTheRootsTheJobRead) {
  ReadSummary s;
  for (int k = 0; k < 17; ++k)  // 17 class folders of 235 files of 110 KiB (429 MiB)
    s.folders.push_back(
        {"/data/imagenet/train/n0" + std::to_string(1440764 + k), 7, 0, 235, 235 * 112640, 470});
  s.folders.push_back({"/scratch/val", 8, 1, 400, 400 * 112640, 400});
  s.folders.push_back({"/home/u/job", 254, 1, 1, 2048, 1});  // its config: under 1% of the bytes
  for (const auto& f : s.folders) s.files += f.files, s.bytes += f.bytes, s.reads += f.reads;
  const DataRoots d = data_roots(s);
  ASSERT_EQ(d.roots.size(), 2u);
  EXPECT_EQ(d.roots[0].path, "/data/imagenet/train");
  EXPECT_EQ(d.roots[0].folders, 17u);
  EXPECT_EQ(d.roots[0].files, 17u * 235);
  EXPECT_EQ(d.roots[0].bytes, 17u * 235 * 112640);
  EXPECT_EQ(d.roots[0].dev_major, 7u);
  EXPECT_EQ(d.roots[1].path, "/scratch/val");
  EXPECT_EQ(d.elsewhere.files, 1u);
  EXPECT_EQ(d.elsewhere.bytes, 2048u);

  JobReads r;
  r.summary = s;
  r.roots = d;
  r.root_where = {"ext4 on 7:0 (loop0)", "xfs on 8:1 (sda1)"};
  const std::vector<std::string> lines = job_reads_text(r);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "  /data/imagenet/train (ext4 on 7:0 (loop0)): 4.00k files in 17 folders, 429 MiB");
  EXPECT_EQ(lines[2], "  /scratch/val (xfs on 8:1 (sda1)): 400 files, 43 MiB");
  EXPECT_EQ(lines[3], "  elsewhere: 1 file, 2 KiB");
}

// Folders that reach a root from two sides (n1 joined one root, then /data/a/x another that
// shares /data/a with it) end as one root.
TEST(ReadLogTest, RootsThatShareAFolderAreOne) {
  ReadSummary s;
  s.folders = {{"/data/a/b/n1", 7, 0, 10, 1000, 10},
               {"/data/a/c", 7, 0, 10, 900, 10},
               {"/data/a/b/n2", 7, 0, 10, 800, 10}};
  for (const auto& f : s.folders) s.files += f.files, s.bytes += f.bytes;
  const DataRoots d = data_roots(s);
  ASSERT_EQ(d.roots.size(), 1u);
  EXPECT_EQ(d.roots[0].path, "/data/a");
  EXPECT_EQ(d.roots[0].folders, 3u);
  EXPECT_EQ(d.elsewhere.files, 0u);
}

TEST(ReadLogTest, TracePlacesEachReadInTheBatchWhoseFetchItFellIn) {
  testing::TempDir dir;
  // Pass 1 of iterator 5 in pid 10, workers 20 and 21; batch 0 built by 20, batch 1 by 21.
  JobLog log;
  JobEpoch e;
  e.id = 1;
  e.pid = 10;
  e.iter = 5;
  e.workers = {20, 21};
  e.batch_size = 2;
  e.num_workers = 2;
  e.batches = {{0, 1000, 5000, 300, 700}, {1, 6000, 6500, 200, -1}};
  log.epochs.push_back(e);
  JobFetch a{20, 0, 1000, 4000, 10, 0, 2};
  a.tid = 20;
  a.batch = 0;
  a.resumes = 0;
  a.process_cpu_ns = 40'000;  // its worker's start-up
  JobFetch b{21, 1, 1500, 4500, 10, 0, 2};
  b.tid = 21;
  b.batch = 1;
  b.resumes = 0;
  b.process_cpu_ns = 50'000;
  log.fetches = {a, b};
  log.worker_ends = {{20, 9000, 41'000}};  // worker 21's end not recorded (killed)
  testing::write_file(dir.path() + "/reads-20.txt",
                      "O 20 1 1 1100 100 /data/x.bin\n"
                      "R 20 1 20 1 1200 1300 0 100\n"
                      "O 20 1 2 1300 50 /usr/lib/python3/foo.py\n"
                      "R 20 1 20 2 1310 1320 0 50\n"     // code: left out
                      "R 20 1 20 1 4200 4300 100 0\n");  // after its fetch: no batch
  testing::write_file(dir.path() + "/reads-21.txt",
                      "O 21 1 1 1600 100 /data/y.bin\nR 21 1 21 1 1700 1800 0 100\n");
  const std::string out = dir.path() + "/trace.json";
  const JobTraceCounts c = write_job_trace(out, log, dir.path(), 0, {"python3", "train.py"});
  EXPECT_EQ(c.reads, 3u);
  EXPECT_EQ(c.reads_in_batches, 2u);
  EXPECT_EQ(c.opens, 2u);
  std::ifstream in(out);
  const nlohmann::json t = nlohmann::json::parse(in);
  EXPECT_EQ(t["otherData"]["format"], kJobTraceFormat);
  EXPECT_EQ(t["otherData"]["version"], kJobTraceVersion);
  std::map<std::int64_t, nlohmann::json> read_batch;  // by pid, of the first read in a fetch
  std::map<std::int64_t, nlohmann::json> fetch;       // by pid
  std::size_t waits = 0, steps = 0;
  for (const auto& ev : t["traceEvents"]) {
    if (ev.value("cat", "") == "read" && !ev["args"]["batch"].is_null())
      read_batch[ev["pid"].get<std::int64_t>()] = ev["args"];
    if (ev.value("cat", "") == "fetch") fetch[ev["pid"].get<std::int64_t>()] = ev["args"];
    if (ev.value("name", "") == "wait") {
      ++waits;
      EXPECT_DOUBLE_EQ(ev["args"]["cpu_ms"].get<double>(), ev["args"]["batch"] == 0 ? 3e-4 : 2e-4);
    }
    if (ev.value("name", "") == "step") {
      ++steps;
      EXPECT_DOUBLE_EQ(ev["args"]["cpu_ms"].get<double>(), 7e-4);
    }
  }
  // Worker 20's process: 40 µs before its fetch, then 1 µs more to its loop's end, 10 ns of which
  // the fetch's own: 990 ns outside it. Worker 21's end is unknown: no after_cpu_ms.
  EXPECT_DOUBLE_EQ(fetch[20]["startup_cpu_ms"].get<double>(), 0.04);
  EXPECT_DOUBLE_EQ(fetch[20]["after_cpu_ms"].get<double>(), 990e-6);
  EXPECT_DOUBLE_EQ(fetch[21]["startup_cpu_ms"].get<double>(), 0.05);
  EXPECT_FALSE(fetch[21].contains("after_cpu_ms"));
  EXPECT_EQ(waits, 2u);
  EXPECT_EQ(steps, 1u);  // the pass's last batch has none
  EXPECT_EQ(read_batch[20]["batch"], 0);
  EXPECT_EQ(read_batch[21]["batch"], 1);
  EXPECT_EQ(read_batch[21]["pass"], 1);  // through its worker's pid
}

// Every byte a name can hold (0x01 to 0xFF) travels through the trace's JSON and back: the
// encoded form is valid UTF-8 (a strict JSON dump takes it), and decoding gives the bytes.
TEST(TracePathTest, EveryByteAndPathMaxLongNamesRoundTrip) {
  auto round_trip = [](const std::string& path) {
    const std::string text = encode_trace_path(path);
    EXPECT_NO_THROW((void)nlohmann::json(text).dump()) << "not UTF-8: " << text.substr(0, 40);
    const std::optional<std::string> back = decode_trace_path(text);
    ASSERT_TRUE(back.has_value()) << text.substr(0, 40);
    EXPECT_EQ(*back, path);
  };
  std::string all;
  for (int b = 1; b <= 0xFF; ++b) {
    round_trip("/d/lat" + std::string(1, char(b)) + "x");
    all += char(b);
  }
  round_trip(all);
  round_trip("/d/100%25 %");
  // Two names differing in one invalid byte stay two, and valid UTF-8 stays as it is.
  EXPECT_EQ(encode_trace_path("lat\xe9"), "lat%E9");
  EXPECT_NE(encode_trace_path("lat\xe9"), encode_trace_path("lat\xe8"));
  EXPECT_EQ(encode_trace_path("caf\xc3\xa9/\xe6\x97\xa5.jpg"), "caf\xc3\xa9/\xe6\x97\xa5.jpg");
  EXPECT_EQ(encode_trace_path("\xed\xa0\x80"), "%ED%A0%80");  // a surrogate is no UTF-8
  EXPECT_EQ(encode_trace_path("\xc0\xaf"), "%C0%AF");         // nor an overlong '/'
  // PATH_MAX-long paths (4095 bytes and the NUL) in any encoding.
  std::string latin1, cjk, mixed;
  while (latin1.size() < 4095) latin1 += latin1.size() % 200 == 0 ? '/' : '\xe9';
  while (cjk.size() + 3 <= 4095) cjk += cjk.size() % 201 == 0 ? "/" : "\xe6\x97\xa5";
  for (int i = 0; mixed.size() < 4095; ++i) mixed += char(1 + i % 255);
  for (const std::string* p : {&latin1, &cjk, &mixed}) round_trip(*p);
  EXPECT_EQ(encode_trace_path(latin1).size(), 4095u * 3 - 2 * 21);  // 21 '/' of one byte
  for (const char* bad : {"%", "a%4", "%G1", "%00", "%%41"})
    EXPECT_FALSE(decode_trace_path(bad).has_value()) << bad;
  EXPECT_EQ(decode_trace_path("%e9%41"), std::string("\xe9"
                                                     "A"));
}

// The trace a job reading lat\xe9, lat\xe8 and lat\xef writes holds three files, not one.
TEST(TracePathTest, TheTraceCarriesNamesThatAreNoUtf8ByteForByte) {
  testing::TempDir dir;
  JobLog log;
  JobEpoch e;
  e.id = 1;
  e.pid = 10;
  e.batches = {{0, 1000, 5000, 300, 700}};
  log.epochs.push_back(e);
  JobFetch f{10, -1, 1000, 4000, 10, 0, 3};
  f.tid = 10;
  f.batch = 0;
  f.pass = 1;  // no workers: the trainer fetches
  log.fetches = {f};
  testing::write_file(dir.path() + "/reads-10.txt",
                      "O 10 1 1 1100 100 /data/lat%E9\nR 10 1 10 1 1200 1300 0 100\n"
                      "O 10 1 2 1100 100 /data/lat%E8\nR 10 1 10 2 1200 1300 0 100\n"
                      "O 10 1 3 1100 100 /data/lat%EF\nR 10 1 10 3 1200 1300 0 100\n");
  const std::string out = dir.path() + "/trace.json";
  write_job_trace(out, log, dir.path(), 0, {"python3", "train.py"});
  std::ifstream in(out);
  const nlohmann::json t = nlohmann::json::parse(in);
  std::set<std::string> paths;
  for (const auto& ev : t["traceEvents"])
    if (ev.value("cat", "") == "open") paths.insert(ev["args"]["path"].get<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"/data/lat%E8", "/data/lat%E9", "/data/lat%EF"}));
}

// --trace-paths relative: every path under the job's data folder, files outside it left out
// with their reads, the command naming no folder of this machine, its credentials withheld.
TEST(TracePathTest, RelativePathsNameNoFolderOfTheMachine) {
  testing::TempDir dir;
  JobLog log;
  JobEpoch e;
  e.id = 1;
  e.pid = 10;
  e.batches = {{0, 1000, 5000, 300, 700}};
  log.epochs.push_back(e);
  JobFetch f{10, -1, 1000, 4000, 10, 0, 2};
  f.tid = 10;
  f.batch = 0;
  f.pass = 1;  // no workers: the trainer fetches
  log.fetches = {f};
  testing::write_file(dir.path() + "/reads-10.txt",
                      "O 10 1 1 10 9 /home/alice/index.txt\nR 10 1 10 1 20 30 0 9\n"  // before any fetch
                      "O 10 1 2 1100 100 /srv/data/train/a/x.bin\nR 10 1 10 2 1200 1300 0 100\n"
                      "O 10 1 3 1100 100 /srv/data/train/b/y%25.bin\nR 10 1 10 3 1200 1300 0 100\n");
  const std::string out = dir.path() + "/trace.json";
  JobTraceOptions options;
  options.relative_paths = true;
  const JobTraceCounts c =
      write_job_trace(out, log, dir.path(), 0,
                      {"env", "HF_TOKEN=hf_abcdefgh", "/usr/bin/python3", "/home/alice/train.py",
                       "/srv/data/train", "--index=/home/alice/index.txt", "--val", "/srv/data/train/b"},
                      "job", options);
  EXPECT_EQ(c.data_root, "/srv/data/train");
  EXPECT_EQ(c.opens, 2u);
  EXPECT_EQ(c.reads, 2u);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("/srv"), std::string::npos) << text;
  EXPECT_EQ(text.find("alice"), std::string::npos) << text;
  EXPECT_EQ(text.find("hf_abcdefgh"), std::string::npos) << text;
  const nlohmann::json t = nlohmann::json::parse(text);
  EXPECT_EQ(t["otherData"]["paths"], "relative");
  EXPECT_EQ(t["otherData"]["command"],
            (std::vector<std::string>{"env", "HF_TOKEN=(set; value not recorded)", "python3", "train.py", ".",
                                      "--index=index.txt", "--val", "b"}));
  std::set<std::string> paths;
  for (const auto& ev : t["traceEvents"])
    if (ev.value("cat", "") == "open") paths.insert(ev["args"]["path"].get<std::string>());
  EXPECT_EQ(paths, (std::set<std::string>{"a/x.bin", "b/y%25.bin"}));
}

TEST(ReadLogTest, JobLogReadsTheTrainersAndWorkersCpuOutsideFetches) {
  const std::string epoch =
      R"({"e":"epoch","it":1,"t":10,"pid":5,"loader":1,"batch_size":2,"num_workers":1,"workers":[6]})";
  const JobLog log = parse_job_log(
      {{"5.jsonl",
        epoch + "\n" +
            R"({"e":"batch","it":1,"k":0,"ask":20,"got":30,"cask":100,"cgot":140,"step_cpu":7,"pid":5})"
            "\n"},
       {"6.jsonl", R"({"e":"fetch","worker":0,"t0":21,"t1":25,"cpu":3,"n":2,"pcpu":900,"pid":6})"
                   "\n"
                   R"({"e":"worker_end","t":50,"pcpu":1000,"pid":6})"
                   "\n"}});
  ASSERT_EQ(log.epochs.size(), 1u);
  ASSERT_EQ(log.epochs[0].batches.size(), 1u);
  EXPECT_EQ(log.epochs[0].batches[0].cpu_ns, 40);
  EXPECT_EQ(log.epochs[0].batches[0].step_cpu_ns, 7);
  ASSERT_EQ(log.fetches.size(), 1u);
  EXPECT_EQ(log.fetches[0].process_cpu_ns, 900);
  ASSERT_EQ(log.worker_ends.size(), 1u);
  EXPECT_EQ(log.worker_ends[0].process_cpu_ns, 1000);
  // A record of version 2 has none: not recorded, not zero.
  const JobLog old = parse_job_log({{"5.jsonl", epoch + "\n" +
                                                    R"({"e":"batch","it":1,"k":0,"ask":20,"got":30,"pid":5})"
                                                    "\n"}});
  EXPECT_EQ(old.epochs[0].batches[0].cpu_ns, -1);
  const std::string back = testing::input_error_of([&] {
    parse_job_log(
        {{"5.jsonl", epoch + "\n" +
                         R"({"e":"batch","it":1,"k":0,"ask":20,"got":30,"cask":140,"cgot":100,"pid":5})"
                         "\n"}});
  });
  EXPECT_NE(back.find("5.jsonl:2: a batch's \"cgot\" below its \"cask\""), std::string::npos) << back;
}

// Record format 2: each record names its process image; a PATH_MAX-long path, every byte of it
// %XX-encoded (three times as long a line), is read back whole.
TEST(ReadLogTest, RecordsNameTheirImageAndALongEncodedPathIsReadWhole) {
  std::string path = "/";
  std::string encoded = "/";
  while (path.size() + 2 < 4095) {
    path += "\xc3\xa9";
    encoded += "%C3%A9";
  }
  std::uint64_t torn = 0;
  const auto f = files_of("F 7 3 8 100 110 190 1 1 1 7 0 12 " + encoded + "\n", &torn);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].image, 3);
  EXPECT_EQ(f[0].tid, 8);
  EXPECT_EQ(f[0].path, path);
  EXPECT_GT(encoded.size(), 12000u);
}

// A launcher that exec'd the job: one pid, two images, each numbering its opens from 1. The
// launcher's open 1 (its code) must not hide the job's open 1 (its data), and the trace numbers
// them apart.
TEST(JobTraceTest, AnExecdImagesOpensAreNumberedApartFromTheLaunchers) {
  testing::TempDir dir;
  testing::write_file(dir.path() + "/reads-30.txt",
                      "O 30 1 1 100 50 /usr/lib/python3/launcher_lib.py\n"
                      "R 30 1 30 1 110 120 0 50\n"
                      "O 30 1 2 130 100 /data/a.bin\n"
                      "R 30 1 30 2 140 150 0 100\n"
                      "O 30 2 1 200 100 /data/b.bin\n"
                      "R 30 2 30 1 210 220 0 100\n"
                      "O 30 2 2 230 100 /data/c.bin\n"
                      "R 30 2 30 2 240 250 0 100\n");
  const std::string out = dir.path() + "/trace.json";
  const JobTraceCounts c = write_job_trace(out, JobLog{}, dir.path(), 0, {"python3", "launcher.py"});
  EXPECT_EQ(c.opens, 3u);
  EXPECT_EQ(c.reads, 3u);
  std::ifstream in(out);
  const nlohmann::json t = nlohmann::json::parse(in);
  std::map<std::uint64_t, std::string> opens;
  for (const auto& ev : t["traceEvents"]) {
    if (ev.value("cat", "") != "open") continue;
    EXPECT_TRUE(opens.emplace(ev["args"]["file"].get<std::uint64_t>(), ev["args"]["path"]).second) << ev;
  }
  std::set<std::string> read;
  for (const auto& ev : t["traceEvents"])
    if (ev.value("cat", "") == "read") read.insert(opens.at(ev["args"]["file"].get<std::uint64_t>()));
  EXPECT_EQ(read, (std::set<std::string>{"/data/a.bin", "/data/b.bin", "/data/c.bin"}));
}

// Two images under one pid, each probe numbering its passes from 1: two passes, numbered in the
// order they began, and a fetch that names its pass follows it.
TEST(JobLogTest, PassesOfTwoImagesOfOnePidAreKeptApart) {
  const std::string a =
      R"({"e":"epoch","it":1,"t":100,"loader":1,"batch_size":2,"num_workers":0,"pid":5,"img":11})"
      "\n"
      R"({"e":"batch","it":1,"k":0,"ask":110,"got":120,"pid":5,"img":11})"
      "\n"
      R"({"e":"epoch","it":1,"t":1000,"loader":1,"batch_size":2,"num_workers":0,"pid":5,"img":12})"
      "\n"
      R"({"e":"fetch","worker":-1,"t0":1005,"t1":1008,"cpu":1,"n":2,"batch":0,"pass":1,"pid":5,"img":12})"
      "\n"
      R"({"e":"batch","it":1,"k":0,"ask":1001,"got":1010,"pid":5,"img":12})"
      "\n"
      R"({"e":"batch","it":1,"k":1,"ask":1020,"got":1030,"pid":5,"img":12})"
      "\n";
  const JobLog log = parse_job_log({{"5.jsonl", a}});
  ASSERT_EQ(log.epochs.size(), 2u);
  EXPECT_EQ(log.epochs[0].id, 1);
  EXPECT_EQ(log.epochs[0].batches.size(), 1u);
  EXPECT_EQ(log.epochs[1].id, 2);
  EXPECT_EQ(log.epochs[1].batches.size(), 2u);
  ASSERT_EQ(log.fetches.size(), 1u);
  EXPECT_EQ(log.fetches[0].pass, 2);
}

// The guests' counters file: the recorder's counts and every probe slot's, summed by why.
TEST(LostRecordsTest, CountsAreSummedByWhyAndSaid) {
  namespace gc = guest_counters;
  std::string bytes(gc::kBytes, '\0');
  const auto set = [&](std::size_t word, std::uint64_t v) {
    for (int b = 0; b < 8; ++b) bytes[word * 8 + std::size_t(b)] = char((v >> (8 * b)) & 0xff);
  };
  EXPECT_EQ(lost_records_text(lost_records(bytes)), "");
  set(gc::kRecorderLost + gc::kNoSpace, 300);
  set(gc::kProbeSlots + 1 + gc::kNoSpace, 2);  // a probe's slot: pid, then its reasons
  set(gc::kProbeSlots + gc::kProbeSlotWords * 5 + 1 + gc::kRefused, 4);
  set(gc::kRefusedUid, 65534 + 1);
  set(gc::kUnrecorded, 9);
  const LostRecords l = lost_records(bytes);
  EXPECT_EQ(l.no_space, 302u);
  EXPECT_EQ(l.refused, 4u);
  EXPECT_EQ(l.other, 0u);
  EXPECT_EQ(l.unrecorded_calls, 9u);
  ASSERT_TRUE(l.refused_uid);
  EXPECT_EQ(*l.refused_uid, 65534u);
  const std::string say = lost_records_text(l);
  EXPECT_NE(say.find("records lost: 306 "), std::string::npos) << say;
  EXPECT_NE(say.find("refused to a process of user 65534"), std::string::npos) << say;
  EXPECT_NE(say.find("9 calls made inside the read recorder"), std::string::npos) << say;
  EXPECT_EQ(lost_records(bytes.substr(0, 100)).total(), 0u);  // a file cut short: nothing counted
}

}  // namespace
}  // namespace feedbench
