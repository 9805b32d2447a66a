#include "command_line.h"

namespace po = boost::program_options;

namespace feedbench {
namespace {

std::atomic<int> g_stop_signal{0};
void on_stop_signal(int sig) { g_stop_signal.store(sig); }

}  // namespace

bool parse_command_line(int argc, char** argv, const po::options_description& options,
                        po::variables_map& vm, const po::positional_options_description* positional) {
  po::command_line_parser parser(argc, argv);
  parser.options(options).style(po::command_line_style::default_style &
                                ~po::command_line_style::allow_guessing);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) return true;
  po::notify(vm);
  return false;
}

StopOnSignals::StopOnSignals() {
  g_stop_signal.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StopOnSignals::~StopOnSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

std::atomic<int>* StopOnSignals::flag() { return &g_stop_signal; }

}  // namespace feedbench
