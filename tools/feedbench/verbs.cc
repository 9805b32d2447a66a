// The feedbench command's dispatch: the verbs (kVerbs) and their usage, and what runs the verb a
// command line names, turning bad input into one message and exit code 2. main.cc calls it.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>

#include "command_line.h"
#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "verbs.h"

namespace feedbench {

struct sigaction g_inherited_sigxfsz {};

namespace {

constexpr Verb kVerbs[] = {
    {"run", run_main, "run an experiment config and write a result file"},
    {"gen", gen_main, "write a deterministic synthetic data set"},
    {"stage", stage_main, "copy a selection to a cache, verified, with a manifest"},
    {"verify", verify_main, "re-hash a cache against its manifest (and its source)"},
    {"diff", diff_main, "compare two result files; exit 1 on a regression"},
    {"report", report_main, "turn result files into a self-contained HTML report"},
    {"env", env_main, "describe this host and the paths given"},
    {"watch", watch_main, "run a training command unchanged and say whether it waited for data"},
    {"replay", replay_main, "run a watched job's data loading again from its trace, what-ifs and all"},
    {"qualify", qualify_main, "how many accelerators of each workload this storage feeds: one card"},
};

}  // namespace

std::span<const Verb> command_verbs() { return kVerbs; }

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: feedbench <verb> [options]   (feedbench <verb> --help for its options)\n\n"
               "Can this machine's storage feed the GPU, and does a local cache help?\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::fprintf(out, "  %-8s %s\n", v.name, v.summary);
}

int command_main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    print_usage(stdout);
    return 0;
  }
  if (verb == "--version") {
    std::printf("feedbench %s\n", "0.1.0");
    return 0;
  }
  for (const Verb& v : kVerbs) {
    if (verb != v.name) continue;
    std::string program = std::string("feedbench ") + v.name;
    argv[1] = program.data();
    try {
      // A/B switches in the environment are checked before the verb reads or writes anything.
      check_env_settings();
      return v.main(argc - 1, argv + 1);
    } catch (const std::exception&) {
      const VerbFailure f = verb_failure(std::current_exception(), v.name);
      std::fprintf(stderr, "feedbench %s: %s\n", v.name, f.message().c_str());
      return f.exit_code;
    }
  }
  std::fprintf(stderr, "feedbench: unknown verb '%s'\n", printable(verb).c_str());
  print_usage(stderr);
  return 2;
}

}  // namespace feedbench
