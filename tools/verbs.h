// The verbs of the `feedbench` command. Each takes the arguments after the verb (argv[0] is
// "feedbench <verb>") and RETURNS the exit code: 0 success, 1 the verb's "no" (regression,
// verification failure, failed staging), 2 bad input. InputError thrown from a verb is
// printed by main as "feedbench <verb>: <message>" with exit code 2.
#pragma once

namespace feedbench {

int run_main(int argc, char** argv);     // run_verb.cc
int gen_main(int argc, char** argv);     // gen_verb.cc
int stage_main(int argc, char** argv);   // stage_verb.cc
int verify_main(int argc, char** argv);  // verify_verb.cc
int diff_main(int argc, char** argv);    // diff_verb.cc
int report_main(int argc, char** argv);  // report_verb.cc
int env_main(int argc, char** argv);     // env_verb.cc
int watch_main(int argc, char** argv);   // watch_verb.cc

}  // namespace feedbench
