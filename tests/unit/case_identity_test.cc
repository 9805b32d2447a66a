// The identity of every case — its name and its canonical parameters, as result files record
// them and `diff` matches them — held against a golden list: every config shipped in configs/,
// and one family of each kind with every optional parameter set. A change to how the plan
// stores or reads parameters must leave this list byte for byte as it is; a change meant to
// rename cases regenerates it (FEEDBENCH_UPDATE_GOLDEN=1) and says so in its commit.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "feedbench/plan/config.h"
#include "feedbench/plan/plan.h"
#include "test_util.h"

namespace feedbench {
namespace {

using json = nlohmann::json;

const std::string kSourceDir = FEEDBENCH_SOURCE_DIR;
const std::string kGolden = kSourceDir + "/tests/unit/data/case_identity.txt";

// Every optional parameter of every family set, beside non-default required ones.
json every_parameter(const std::string& source, const std::string& cache) {
  return {{"name", "every-parameter"},
          {"dataset", {{"source", source}, {"cache", cache}}},
          {"families",
           {{{"family", "file_read"},
             {"pattern", {"random", "zipf:1.1", "hot_set:10%:90%"}},
             {"block_size", "64KiB"},
             {"engine", "io_uring"},
             {"queue_depth", 16},
             {"workers", 2},
             {"cache_state", "direct"},
             {"path", "cache"},
             {"runtime", "2s"},
             {"max_bytes", "1GiB"},
             {"ramp_time", "500ms"},
             {"steady_state", {{"metric", "bw"}, {"mode", "slope"}, {"limit", "2%"}, {"window", "1s"}}},
             {"sink", "host"}},
            {{"family", "loader"},
             {"batch_size", 8},
             {"workers", 3},
             {"prefetch", 4},
             {"step_time", "normal:50ms:5ms"},
             {"transform", {"200us/sample", "random_resized_crop:224"}},
             {"samples", {"files", "records:4KiB"}},
             {"epochs", 2},
             {"steps", 100},
             {"warmup_steps", 2},
             {"accelerators", 2},
             {"target_au", 0.95},
             {"engine", "io_uring"},
             {"cache_state", "warm"},
             {"path", "source"},
             {"pattern", "zipf:0.9"},
             {"accelerator", "cpu"},
             {"overlap", false},
             {"handover", "process"},
             {"next_cost", "1100us"},
             {"next_cost_per_mib", "2ms"},
             {"framework", "none"},
             {"collate", "list"}},
            {{"family", "loader"}, {"samples", "tfrecord"}, {"shuffle_buffer", 1024}, {"verify_crc", false}},
            {{"family", "replay"},
             {"trace", "/nonexistent/job.trace.json"},
             {"job", "resnet"},
             {"step_scale", 0.5},
             {"workers", 0},
             {"batch_size", 64},
             {"epochs", 3},
             {"cache_state", "warm"},
             {"path", "cache"},
             {"target_au", 0.8},
             {"allow_resized", true},
             {"cpu_scale", 2}},
            {{"family", "stage"}, {"workers", 8}, {"cache_state", "warm"}, {"verify", false}}}}};
}

// RETURNS: one line per case (its name, then its parameters as the result file writes them) and
// per dropped combination, under a heading naming the config.
std::string identity_lines(const std::string& heading, const Plan& plan) {
  std::ostringstream out;
  out << "# " << heading << "\n";
  for (const Case& c : plan.cases) out << c.name() << "\t" << c.params.dump() << "\n";
  for (const std::string& d : plan.dropped) out << "dropped\t" << d << "\n";
  return out.str();
}

std::string all_identities() {
  // The shipped configs name their folders through ${VAR}, which must exist; no path is part of
  // a case's identity.
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "source");
  std::filesystem::create_directories(dir / "cache");
  ::setenv("FEEDBENCH_SOURCE", (dir / "source").c_str(), 1);
  ::setenv("FEEDBENCH_CACHE", (dir / "cache").c_str(), 1);
  std::vector<std::filesystem::path> configs;
  for (const auto& e : std::filesystem::directory_iterator(kSourceDir + "/configs"))
    if (e.path().extension() == ".json") configs.push_back(e.path());
  std::sort(configs.begin(), configs.end());
  std::string text;
  for (const auto& path : configs)
    text += identity_lines("configs/" + path.filename().string(),
                           expand_plan(load_config(path.string()), kDefaultMaxCases, /*cuda_built=*/true));
  text += identity_lines(
      "every parameter",
      expand_plan(parse_config(every_parameter(dir / "source", dir / "cache").dump(), "every.json"),
                  kDefaultMaxCases, /*cuda_built=*/true));
  ::unsetenv("FEEDBENCH_SOURCE");
  ::unsetenv("FEEDBENCH_CACHE");
  return text;
}

TEST(CaseIdentity, EveryCaseKeepsItsNameAndParameters) {
  const std::string now = all_identities();
  if (const char* update = std::getenv("FEEDBENCH_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(kGolden) << now;
    GTEST_SKIP() << "wrote " << kGolden;
  }
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << "no golden list at " << kGolden << " (FEEDBENCH_UPDATE_GOLDEN=1 writes it)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(now, golden.str());
}

}  // namespace
}  // namespace feedbench
