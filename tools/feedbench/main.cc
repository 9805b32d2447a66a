// feedbench: can this machine's storage feed the GPU, and does a local cache help?
// The program over the command's library (feedbench_cli): the verbs are dispatched in verbs.cc.
#include <csignal>

#include "verbs.h"

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write then fails with EFBIG, reported like a full disk
  // (temporaries removed), instead of SIGXFSZ killing the process mid-file.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ignore, &feedbench::g_inherited_sigxfsz);
  return feedbench::command_main(argc, argv);
}
