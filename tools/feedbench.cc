// feedbench: can this machine's storage feed the GPU, and does a local cache help?
// Dispatches to a verb; turns bad input into one message and exit code 2.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "command_line.h"
#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"
#include "verbs.h"

namespace feedbench {
struct sigaction g_inherited_sigxfsz {};
}  // namespace feedbench

namespace {

struct Verb {
  const char* name;
  int (*main)(int, char**);
  const char* summary;
};

constexpr Verb kVerbs[] = {
    {"run", feedbench::run_main, "run an experiment config and write a result file"},
    {"gen", feedbench::gen_main, "write a deterministic synthetic data set"},
    {"stage", feedbench::stage_main, "copy a selection to a cache, verified, with a manifest"},
    {"verify", feedbench::verify_main, "re-hash a cache against its manifest (and its source)"},
    {"diff", feedbench::diff_main, "compare two result files; exit 1 on a regression"},
    {"report", feedbench::report_main, "turn result files into a self-contained HTML report"},
    {"env", feedbench::env_main, "describe this host and the paths given"},
    {"watch", feedbench::watch_main, "run a training command unchanged and say whether it waited for data"},
    {"replay", feedbench::replay_main,
     "run a watched job's data loading again from its trace, what-ifs and all"},
};

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: feedbench <verb> [options]   (feedbench <verb> --help for its options)\n\n"
               "Can this machine's storage feed the GPU, and does a local cache help?\n\nverbs:\n");
  for (const Verb& v : kVerbs) std::fprintf(out, "  %-8s %s\n", v.name, v.summary);
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk
  // (temporaries removed), instead of SIGXFSZ killing the process mid-file.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &feedbench::g_inherited_sigxfsz);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    usage(stdout);
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
      feedbench::check_env_settings();
      return v.main(argc - 1, argv + 1);
    } catch (const std::exception&) {
      const feedbench::VerbFailure f = feedbench::verb_failure(std::current_exception(), v.name);
      std::fprintf(stderr, "feedbench %s: %s\n", v.name, f.message().c_str());
      return f.exit_code;
    }
  }
  std::fprintf(stderr, "feedbench: unknown verb '%s'\n", feedbench::printable(verb).c_str());
  usage(stderr);
  return 2;
}
