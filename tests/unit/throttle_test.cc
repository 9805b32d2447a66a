#include "feedbench/io/throttle.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "feedbench/base/error.h"
#include "feedbench/base/units.h"
#include "feedbench/plan/config.h"

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
  const double catch_up = std::chrono::duration<double>(Throttle::kCatchUp).count();
  EXPECT_GE(s, 0.39 - 0.01 /*first read free*/ - catch_up);
  Throttle one(100u << 20);
  EXPECT_GE(seconds_to_acquire(one, 1, 41, 1u << 20), 0.399 - catch_up);
}

// The timeline starts at the first read: no credit before it, and each read waits for the
// end of its slot (a planted 75% slowdown of a 50 ms round came out faster than the base when
// the first 20 ms were free and the first read cost nothing).
TEST(ThrottleTest, NoCreditAtTheStart) {
  Throttle t(100u << 20);  // 1 MiB every 10 ms
  EXPECT_GE(seconds_to_acquire(t, 1, 10, 1u << 20), 0.0995);
}

// A pause banks at most kCatchUp: later reads do not go faster than the rate beyond it.
TEST(ThrottleTest, IdleTimeIsBankedOnlyUpToTheCatchUp) {
  Throttle t(10u << 20);  // 10 MiB/s
  t.acquire(1u << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // 4 more MiB after the pause still take 3 reads' worth of 100 ms each, less the catch-up.
  EXPECT_GE(seconds_to_acquire(t, 1, 4, 1u << 20), 0.299 - 0.020);
}

// Many small reads at a high rate, every other one followed by time away from the throttle
// longer than its slot (as a late wake-up on a loaded host): that time must overlap the
// following slots, so the whole takes about max(slots, time away), not slots plus the lateness
// (the rate fell to 15-19% of the throttle's on a loaded host when lateness was lost). The
// time away is measured, so a loaded host's longer sleeps do not change the verdict.
TEST(ThrottleTest, LateWakeUpsAreMadeUp) {
  const std::uint64_t rate = 400u << 20;  // a 64 KiB slot every 156 us
  const int reads = 1000;
  Throttle t(rate);
  double away = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reads; ++i) {
    t.acquire(64u << 10);
    if (i % 2) continue;
    auto s0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    away += std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double slots = double(reads) * (64u << 10) / double(rate);
  EXPECT_LT(total, 1.15 * std::max(slots, away) + 0.02)
      << "total " << total << " s, slots " << slots << " s, away " << away << " s";
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
