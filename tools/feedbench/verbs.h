// The verbs of the `feedbench` command. Each takes the arguments after the verb (argv[0] is
// "feedbench <verb>") and RETURNS the exit code: 0 success, 1 the verb's "no" (regression,
// verification failure, failed staging), 2 bad input. InputError thrown from a verb is
// printed by command_main as "feedbench <verb>: <message>" with exit code 2.
#pragma once

#include <csignal>
#include <cstdio>
#include <span>
#include <string>

namespace feedbench {

// One verb of the command: `feedbench NAME ...` calls main with the arguments after the verb.
struct Verb {
  const char* name;
  int (*main)(int, char**);
  const char* summary;  // its line in the usage, and its man page's NAME line
};

// RETURNS: the command's verbs, in the order the usage lists them. verbs.cc.
std::span<const Verb> command_verbs();
// Writes the command's usage (`feedbench --help`) to `out`. verbs.cc.
void print_usage(std::FILE* out);
// RETURNS: the exit code of the command line `argv` (argv[0] the program, argv[1] the verb): the
// verb's own; 0 for --help and --version; 2 for no verb or an unknown one (one line naming it,
// then the usage, on stderr), and for bad input a verb throws (one line "feedbench VERB: ...").
// argv[1] becomes "feedbench VERB" for the verb. verbs.cc.
int command_main(int argc, char** argv);

int run_main(int argc, char** argv);     // run_verb.cc
int replay_main(int argc, char** argv);  // replay_verb.cc; runs through run_request (run/run_request.h)

int gen_main(int argc, char** argv);      // gen_verb.cc
int stage_main(int argc, char** argv);    // stage_verb.cc
int verify_main(int argc, char** argv);   // verify_verb.cc
int diff_main(int argc, char** argv);     // diff_verb.cc
int report_main(int argc, char** argv);   // report_verb.cc
int env_main(int argc, char** argv);      // env_verb.cc
int watch_main(int argc, char** argv);    // watch_verb.cc
int qualify_main(int argc, char** argv);  // qualify_verb.cc; its parts in qualify/

// SIGXFSZ's disposition as feedbench was started with it (main ignores it, so that a write past
// a file-size limit fails with EFBIG): the job watch runs gets it back. verbs.cc; main.cc sets it.
extern struct sigaction g_inherited_sigxfsz;

}  // namespace feedbench
