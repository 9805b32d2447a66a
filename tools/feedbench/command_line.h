// What every verb does with its command line: strict parsing, --help, and for the long-running
// verbs a clean stop on Ctrl-C.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "feedbench/base/stop_signals.h"  // StopOnSignals, which the verbs use

namespace feedbench {

// Parses argv strictly: unknown options, missing values and abbreviations ("--fo" for
// --force) are errors, which main reports with exit code 2.
// RETURNS: true when --help was given: the caller prints its usage and returns 0.
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& options,
                        boost::program_options::variables_map& vm,
                        const boost::program_options::positional_options_description* positional = nullptr);

// RETURNS: the options of `options` for --help, one line each: "  -c, --config FILE  what it does".
// RETURNS: whether `fd` is a person's terminal: a terminal, and not under an MPI launcher, where
// a rank's stdout and stderr are the launcher's pseudo-terminal whatever mpirun's own streams
// are (colour and progress redraws reached a file through `mpirun ... > out 2>&1`).
bool interactive_terminal(int fd);

std::string options_help(const boost::program_options::options_description& options);

// RETURNS: `text` as a whole number from `min` to `max`. Throws InputError "<option>: expected a
// whole number from MIN to MAX, got 'TEXT'" for anything else (a sign, a fraction, an overflow).
std::uint64_t parse_whole_number(const std::string& text, const std::string& option, std::uint64_t min,
                                 std::uint64_t max);

// RETURNS: `text` as a number from `min` to `max` ("0.9", "1e3"). Throws InputError "<option>:
// expected a number from MIN to MAX, got 'TEXT'" for anything else (trailing text, inf, nan).
double parse_number(const std::string& text, const std::string& option, double min, double max);

// Checks the Google Benchmark flags feedbench relies on, before benchmark::Initialize reads them
// (the library takes --benchmark_repetitions=-1 and fails deep inside a run): repetitions a
// whole number from 1 to kMaxRepetitions, min_time a number of seconds from 0, filter a regular
// expression the library can compile. Looks at argv's --benchmark_NAME=VALUE and at the
// BENCHMARK_NAME environment variables the library also reads.
// Throws InputError naming the flag (or variable) and what was expected.
void check_benchmark_flags(int argc, char** argv);

// What stopped a verb, as the user is told: bad input (InputError) and bad options exit 2, the
// options' error pointing at the verb's --help; anything else is a run error and exits 1.
struct VerbFailure {
  int exit_code = 1;
  std::string reason;  // the error's text (an option error: "... (see feedbench VERB --help)")
  // RETURNS: the line after "feedbench VERB: ": `reason`, a run error's led by "error: ".
  std::string message() const { return exit_code == 1 ? "error: " + reason : reason; }
};

// REQUIRES: `error` holds a std::exception (anything else is thrown on, unclassified).
// RETURNS: how verb `verb` reports it. main, and each rank of a distributed run before it
// agrees with the others to start, classify by this one rule.
VerbFailure verb_failure(const std::exception_ptr& error, std::string_view verb);

// Sends this process's standard output and error to /dev/null, flushed first: for a rank other
// than 0 of a distributed run, whose figures and reasons reach rank 0 through the cluster.
void silence_output();

}  // namespace feedbench
