#include "feedbench/results/recorded_variables.h"

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "test_util.h"

namespace feedbench {
namespace {

TEST(RecordedVariablesTest, RecordsOwnSettingsBenchmarkFlagsAndExpandedOnly) {
  const char* env[] = {"FEEDBENCH_IO_URING_CHAIN=0",
                       "FEEDBENCH_NOTES=private",
                       "BENCHMARK_FILTER=file_read",
                       "HOME=/home/u",
                       "DATA=/srv/d",
                       nullptr};
  RecordedVariables r = recorded_variables({{"DATA", "/srv/d"}}, {}, env);
  EXPECT_EQ(r.recorded.at("FEEDBENCH_IO_URING_CHAIN"), "0");
  EXPECT_EQ(r.recorded.at("BENCHMARK_FILTER"), "file_read");
  EXPECT_EQ(r.recorded.at("DATA"), "/srv/d");
  EXPECT_EQ(r.recorded.count("FEEDBENCH_NOTES"), 0u) << "not one of feedbench's settings";
  EXPECT_EQ(r.recorded.count("HOME"), 0u) << "not expanded by the config";
  EXPECT_TRUE(r.withheld.empty());
}

TEST(RecordedVariablesTest, CredentialsAndRedactedNamesAreRecordedAsSetNeverByValue) {
  const char* env[] = {"FEEDBENCH_TOKEN=hunter2", "BENCHMARK_API_KEY=k3y", nullptr};
  RecordedVariables r =
      recorded_variables({{"bucket_secret", "s3cr3t"}, {"SITE", "eu-1"}, {"EMPTY_KEY", ""}}, {"SITE"}, env);
  EXPECT_EQ(r.recorded.count("FEEDBENCH_TOKEN"), 0u) << "not a setting of feedbench's: not recorded at all";
  EXPECT_EQ(r.recorded.at("BENCHMARK_API_KEY"), kValueWithheld);
  EXPECT_EQ(r.recorded.at("bucket_secret"), kValueWithheld);
  EXPECT_EQ(r.recorded.at("SITE"), kValueWithheld) << "--redact SITE";
  EXPECT_EQ(r.recorded.at("EMPTY_KEY"), kValueWithheld);
  EXPECT_EQ(r.withheld.at("bucket_secret"), "s3cr3t");
  EXPECT_EQ(r.withheld.at("SITE"), "eu-1");
  EXPECT_EQ(r.withheld.count("EMPTY_KEY"), 0u) << "an empty value has nothing to take out";
}

TEST(RecordedVariablesTest, CredentialNames) {
  for (const char* n : {"FEEDBENCH_TOKEN", "aws_secret_access_key", "DB_PASSWORD", "PASSWD", "GPG_PASSPHRASE",
                        "GOOGLE_APPLICATION_CREDENTIALS", "HTTP_AUTH", "API_KEY"})
    EXPECT_TRUE(looks_like_credential(n)) << n;
  for (const char* n : {"DATA", "FEEDBENCH_SCAN_THREADS", "BENCHMARK_FILTER", "SOURCE_ROOT"})
    EXPECT_FALSE(looks_like_credential(n)) << n;
}

TEST(RecordedVariablesTest, RedactNamesMustBeNames) {
  EXPECT_NO_THROW(check_redact_names({"SITE", "_x1"}));
  for (const char* bad : {"", "A=B", "1A", "A B", "A-B"}) {
    try {
      check_redact_names({bad});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--redact: expected an environment variable's name"),
                std::string::npos);
    }
  }
}

TEST(RecordedVariablesTest, WithheldValuesLeaveEveryStringAndKey) {
  nlohmann::json j = {{"source", "/mnt/s3cr3t/data"},
                      {"families", {{{"url", "https://u:s3cr3t@host/x"}, {"n", 3}}}},
                      {"s3cr3t-key", "s3cr3ts3cr3t"}};
  withhold_values(j, {{"SECRET", "s3cr3t"}, {"LONGER", "s3cr3ts3cr3t"}});
  const std::string dumped = j.dump();
  EXPECT_EQ(dumped.find("s3cr3t"), std::string::npos) << dumped;
  EXPECT_EQ(j["source"], "/mnt/${SECRET}/data");
  EXPECT_EQ(j["families"][0]["url"], "https://u:${SECRET}@host/x");
  EXPECT_EQ(j["${SECRET}-key"], "${LONGER}") << "the longest value first";
  EXPECT_EQ(j["families"][0]["n"], 3);
}

// A watched job's command line holds no credential: by the name of the variable or option that
// carries it (assignments, --opt=V, --opt V, inside a shell's one argument), by --redact's
// names, and by the value of a credential-like variable wherever it appears.
TEST(RecordedVariablesTest, CommandLinesWithholdCredentials) {
  const std::string w(kValueWithheld);
  using V = std::vector<std::string>;
  EXPECT_EQ(withhold_in_command({"env", "HF_TOKEN=hf_abc", "python3", "train.py", "--token=t1", "--api-key",
                                 "k2", "--lr", "0.1", "-auth_key=k3", "--password", "--verbose"},
                                {}, nullptr),
            (V{"env", "HF_TOKEN=" + w, "python3", "train.py", "--token=" + w, "--api-key", w, "--lr", "0.1",
               "-auth_key=" + w, "--password", "--verbose"}));
  EXPECT_EQ(
      withhold_in_command({"bash", "-c", "cd /x && AWS_SECRET_ACCESS_KEY='a b c' python3 t.py --api-key k4"},
                          {}, nullptr),
      (V{"bash", "-c", "cd /x && AWS_SECRET_ACCESS_KEY=" + w + " python3 t.py --api-key " + w}));
  // An argument that starts with the assignment or option is its value to the end, spaces and all.
  EXPECT_EQ(withhold_in_command({"env", "HF_TOKEN=a b", "t", "--passphrase=two words"}, {}, nullptr),
            (V{"env", "HF_TOKEN=" + w, "t", "--passphrase=" + w}));
  // --redact: a variable's or an option's name, '-' and '_' alike, any case.
  EXPECT_EQ(withhold_in_command({"python3", "t.py", "--bucket", "b1", "SITE=eu", "--site=x"},
                                {"bucket", "SITE"}, nullptr),
            (V{"python3", "t.py", "--bucket", w, "SITE=" + w, "--site=" + w}));
  EXPECT_EQ(withhold_in_command({"python3", "t.py", "--bucket", "b1"}, {}, nullptr),
            (V{"python3", "t.py", "--bucket", "b1"}));
  // A credential passed by value: its variable names it.
  const char* env[] = {"HF_TOKEN=hf_0123456789", "SHORT_KEY=abc", "PATH=/usr/bin", nullptr};
  EXPECT_EQ(withhold_in_command({"python3", "t.py", "hf_0123456789", "abc"}, {}, env),
            (V{"python3", "t.py", "${HF_TOKEN}", "abc"}));
  // Names: a variable's or an option's.
  EXPECT_NO_THROW(check_redact_command_names({"SITE", "api-key", "--api-key", "-k"}));
  for (const char* bad : {"", "A=B", "1A", "---x", "a b"})
    EXPECT_NE(testing::input_error_of([&] {
                check_redact_command_names({bad});
              }).find("--redact: expected a variable's or an option's name"),
              std::string::npos)
        << bad;
}

}  // namespace
}  // namespace feedbench
