// The FEEDBENCH_* environment variables that change how a run measures (A/B switches for the
// engineers measuring feedbench itself). Each is parsed here and only here, and a value that
// is not one of its own is bad input: a typo ("FEEDBENCH_IO_URING_CHAIN=false") must not
// silently measure the other side while the result file records the variable as set.
#pragma once

#include <string_view>
#include <vector>

namespace feedbench {

// RETURNS: FEEDBENCH_IO_URING_CHAIN: unset or "1": true (io_uring reads one-block files whole
// in one linked request), "0": false (open, then read). Throws InputError otherwise.
bool io_uring_chain_setting();

// RETURNS: FEEDBENCH_SCAN_THREADS: 1 to 64 threads reading folders during a scan; unset:
// `fallback`. Throws InputError otherwise.
unsigned scan_threads_setting(unsigned fallback);

// RETURNS: FEEDBENCH_RESIDENCY_METHOD: unset, "auto" or "cachestat": false (cachestat where the
// kernel has it, else mincore); "mincore": true (mincore always). Throws InputError otherwise.
bool residency_mincore_setting();

// RETURNS: FEEDBENCH_LATENCY_CLOCK: unset or "auto": false (the time-stamp counter where the
// kernel keeps time with it, latency_clock.h); "steady_clock": true (steady_clock always).
// Throws InputError otherwise.
bool latency_steady_clock_setting();

// RETURNS: FEEDBENCH_OPEN_BENEATH: unset, "auto" or "openat2": false (open_beneath uses openat2
// where the kernel has it, open_beneath.h); "walk": true (its component walk always, to test
// the fallback on a kernel that has openat2). Throws InputError otherwise.
bool open_beneath_walk_setting();

// Checks every setting above. Throws InputError naming the first bad one. feedbench's main
// calls it before any verb, so a bad value stops the verb before anything is read or written.
void check_env_settings();

// RETURNS: the name of every FEEDBENCH_* variable feedbench reads anywhere: the settings above,
// FEEDBENCH_HOST_NAME and FEEDBENCH_RANK_OUTPUT, and the test hooks. A result records these of
// feedbench's own (recorded_variables.h), and no other FEEDBENCH_* variable: a FEEDBENCH_TOKEN
// exported for some other tool is none of a result's business. A new getenv of a FEEDBENCH_*
// name belongs in this list (tests/e2e/secrets.sh checks the sources against it).
const std::vector<std::string_view>& feedbench_variable_names();

}  // namespace feedbench
