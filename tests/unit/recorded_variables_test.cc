#include "feedbench/results/recorded_variables.h"

#include <gtest/gtest.h>

#include "feedbench/base/error.h"

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

}  // namespace
}  // namespace feedbench
