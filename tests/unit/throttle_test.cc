#include "feedbench/throttle.h"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "feedbench/config.h"
#include "feedbench/error.h"
#include "feedbench/units.h"

namespace feedbench {
namespace {

double seconds_to_acquire(Throttle& t, int threads, int reads_per_thread, std::uint64_t bytes) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      for (int r = 0; r < reads_per_thread; ++r) t.acquire(bytes);
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The rate is a floor on time, so this lower bound holds however loaded the machine is: 41
// reads of 1 MiB at 100 MiB/s cannot all start before 400 ms (the first one is free).
TEST(ThrottleTest, HoldsReadsOfAllThreadsTogetherToTheRate) {
  Throttle t(100u << 20);
  const double s = seconds_to_acquire(t, 4, 10, 1u << 20);  // 40 reads of 1 MiB
  EXPECT_GE(s, 0.39 - 0.01 /*first read free*/);
  Throttle one(100u << 20);
  EXPECT_GE(seconds_to_acquire(one, 1, 41, 1u << 20), 0.399);
}

// No burst credit: a pause does not let later reads go faster than the rate.
TEST(ThrottleTest, IdleTimeIsNotBankedAsBurst) {
  Throttle t(10u << 20);  // 10 MiB/s
  t.acquire(1u << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // 4 more MiB after the pause still take at least 3 reads' worth of 100 ms each.
  EXPECT_GE(seconds_to_acquire(t, 1, 4, 1u << 20), 0.299);
}

TEST(ThrottleTest, RatesParseAsSizesPerSecond) {
  EXPECT_EQ(parse_rate("40MiB/s"), 40u << 20);
  EXPECT_EQ(parse_rate("1.5GB/s"), 1500000000u);
  EXPECT_EQ(parse_rate("4096/s"), 4096u);
  EXPECT_THROW(parse_rate("40MiB"), InputError);
  EXPECT_THROW(parse_rate("/s"), InputError);
  EXPECT_THROW(parse_rate("0/s"), InputError);
}

std::string config_error(const std::string& text, const ConfigOverrides& o = {}) {
  try {
    parse_config(text, "c.json", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ThrottleTest, ConfigAndCommandLineNameTheBadRate) {
  const std::string dir = ::testing::TempDir();
  const std::string base = R"({"name": "t", "dataset": {"source": ")" + dir + R"(" THROTTLE},
    "families": [{"family": "file_read"}]})";
  auto with = [&](const std::string& t) {
    std::string s = base;
    s.replace(s.find("THROTTLE"), 8, t);
    return s;
  };
  Config ok = parse_config(with(R"(, "throttle": {"source": "40MiB/s"})"), "c.json");
  EXPECT_EQ(ok.throttle.at("source"), 40u << 20);
  EXPECT_NE(config_error(with(R"(, "throttle": {"source": "fast"})")).find("/dataset/throttle/source"),
            std::string::npos);
  EXPECT_NE(config_error(with(R"(, "throttle": {"disk": "1MiB/s"})")).find("/dataset/throttle"),
            std::string::npos);
  ConfigOverrides o;
  o.throttle = parse_throttles({"source=12MB/s"});
  Config from_cli = parse_config(with(""), "c.json", o);
  EXPECT_EQ(from_cli.throttle.at("source"), 12000000u);
  o.throttle = parse_throttles({"source=12XB/s"});
  const std::string e = config_error(with(""), o);
  EXPECT_NE(e.find("/dataset/throttle/source"), std::string::npos) << e;
  EXPECT_NE(e.find("(from --throttle source)"), std::string::npos) << e;
  EXPECT_THROW(parse_throttles({"disk=1MiB/s"}), InputError);
  EXPECT_THROW(parse_throttles({"source"}), InputError);
}

}  // namespace
}  // namespace feedbench
