#include "command_line.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "feedbench/base/units.h"
#include "feedbench/plan/plan.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

// Longest --benchmark_filter taken: std::regex compiles recursively, once per nesting level.
constexpr std::size_t kMaxFilterBytes = 1024;

// RETURNS: every value given for Google Benchmark flag `name`, each with what to call it in a
// message: "--benchmark_NAME" for argv's --benchmark_NAME=VALUE, "BENCHMARK_NAME (environment)".
std::vector<std::pair<std::string, std::string>> benchmark_flag_values(int argc, char** argv,
                                                                       const char* name) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string env_name = std::string("BENCHMARK_") + name;
  for (char& c : env_name) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (const char* env = std::getenv(env_name.c_str())) out.emplace_back(env_name + " (environment)", env);
  const std::string flag = std::string("--benchmark_") + name;
  const std::string prefix = flag + "=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0)
      out.emplace_back(flag, argv[i] + prefix.size());
  return out;
}

}  // namespace

bool parse_command_line(int argc, char** argv, const po::options_description& options, po::variables_map& vm,
                        const po::positional_options_description* positional) {
  po::command_line_parser parser(argc, argv);
  parser.options(options).style(po::command_line_style::default_style &
                                ~po::command_line_style::allow_guessing);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) return true;
  po::notify(vm);
  return false;
}

std::string options_help(const po::options_description& options) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t width = 0;
  for (const auto& o : options.options()) {
    const std::string shown = o->format_name();  // "-c [ --config ]" or "--config"
    std::string name = "--" + o->long_name();
    if (shown.size() >= 2 && shown[0] == '-' && shown[1] != '-') name = shown.substr(0, 2) + ", " + name;
    if (o->semantic()->max_tokens() > 0) {
      const std::string value = o->semantic()->name();
      name += " " + (value.empty() || value == "arg" ? std::string("VALUE") : value);
    }
    rows.emplace_back(name, o->description());
    width = std::max(width, name.size());
  }
  std::string out;
  for (const auto& [name, what] : rows)
    out += "  " + name + std::string(width - name.size() + 2, ' ') + what + "\n";
  return out;
}

std::uint64_t parse_whole_number(const std::string& text, const std::string& option, std::uint64_t min,
                                 std::uint64_t max) {
  const bool digits = !text.empty() && text.size() <= 20 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || v < min || v > max) {
    std::string shown = text.size() > 40 ? text.substr(0, 37) + "..." : text;
    throw InputError(option + ": expected a whole number from " + std::to_string(min) + " to " +
                     std::to_string(max) + ", got '" + shown + "'");
  }
  return v;
}

double parse_number(const std::string& text, const std::string& option, double min, double max) {
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
    const std::string shown = text.size() > 40 ? text.substr(0, 37) + "..." : text;
    throw InputError(option + ": expected a number from " + format_printf("%g", min) + " to " +
                     format_printf("%g", max) + ", got '" + shown + "'");
  }
  return v;
}

void check_benchmark_flags(int argc, char** argv) {
  for (const auto& [flag, value] : benchmark_flag_values(argc, argv, "repetitions"))
    parse_whole_number(value, flag, 1, std::uint64_t(kMaxRepetitions));
  for (const auto& [flag, value] : benchmark_flag_values(argc, argv, "min_time")) {
    char* end = nullptr;
    errno = 0;
    const double seconds = value.empty() ? -1 : std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(seconds) || seconds < 0)
      throw InputError(flag + ": expected a number of seconds of at least 0 (e.g. 0.5), got '" +
                       (value.size() > 40 ? value.substr(0, 37) + "..." : value) + "'");
  }
  for (const auto& [flag, value] : benchmark_flag_values(argc, argv, "filter")) {
    if (value.size() > kMaxFilterBytes)
      throw InputError(flag + ": expected a regular expression of at most " +
                       std::to_string(kMaxFilterBytes) + " bytes, got " + std::to_string(value.size()) +
                       " bytes");
    // As the library reads it: a leading '-' negates, "all" is everything.
    const std::string spec = !value.empty() && value[0] == '-' ? value.substr(1) : value;
    try {
      std::regex compiled(spec == "all" ? "." : spec, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw InputError(flag + ": expected a regular expression (POSIX extended), got '" +
                       (value.size() > 60 ? value.substr(0, 57) + "..." : value) + "': " + e.what());
    }
  }
}

VerbFailure verb_failure(const std::exception_ptr& error, std::string_view verb) {
  // Messages quote input (a file name, a trace's path, an option's value): escaped here, the
  // one way every verb's error reaches the terminal, so none carries a control sequence.
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return {2, printable(e.what())};
  } catch (const po::error& e) {
    return {2, printable(e.what()) + " (see feedbench " + std::string(verb) + " --help)"};
  } catch (const std::exception& e) {
    return {1, printable(e.what())};
  }
}

void silence_output() {
  std::fflush(stdout);
  std::fflush(stderr);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
  ::close(null);
}

bool interactive_terminal(int fd) {
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||
                        std::getenv("PMI_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
  return !launched && ::isatty(fd) != 0;
}

}  // namespace feedbench
