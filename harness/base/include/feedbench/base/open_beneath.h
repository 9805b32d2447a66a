// Opening a file by a path that some other program wrote (a line of a cache's manifest, a record
// at a data set's root), which must name a file of one folder and nothing outside it. The path
// is checked as text (relative, no "..", "." or empty component), then opened beneath the
// folder's descriptor without following any symbolic link: feedbench never follows a link out
// of a source or a cache (the scan lists links, never walks them; stage writes only through
// real folders), so a cache reached through a link holds nothing feedbench put there.
// openat2(2) with RESOLVE_BENEATH does it in the kernel where it has it (Linux 5.6); elsewhere
// a walk opens one component at a time, each folder with O_NOFOLLOW | O_DIRECTORY and the file
// with O_NOFOLLOW, which refuses the same paths.
#pragma once

#include <string>
#include <string_view>

namespace feedbench {

// RETURNS: "" when `relative` can name a file beneath a folder: not empty, no NUL byte, not
// absolute, no empty, "." or ".." component; else what is wrong, to follow "the path 'x' "
// in a message: "is absolute", "has a '..' component", "has an empty component", ...
std::string beneath_path_problem(std::string_view relative);

// How open_beneath resolves a path. Both refuse the same paths; the walk costs a system call
// per component and stands in where the kernel lacks openat2 (or a seccomp filter hides it).
enum class BeneathMethod {
  kSetting,  // openat2 where the kernel has it, else the walk; FEEDBENCH_OPEN_BENEATH=walk: the walk
  kOpenat2,  // openat2 only: -1 with errno ENOSYS where the kernel lacks it
  kWalk,     // the walk only
};

// Opens `relative` beneath the folder `root_fd` with open(2)'s `flags` (O_CREAT excepted):
// every folder on the way and the file itself reached without following a symbolic link, and
// never above `root_fd`. With O_PATH a symbolic link at the end is refused too.
// REQUIRES: root_fd an open folder (O_PATH will do) or AT_FDCWD; no O_CREAT or O_TMPFILE.
// RETURNS: the descriptor (the caller's), or -1 with errno: EXDEV when beneath_path_problem()
// names a problem (nothing is opened), ELOOP when a symbolic link is on the way (ENOTDIR for
// one at the end with O_DIRECTORY, as open(2) answers), ENOSYS for kOpenat2 without it, else
// open(2)'s.
int open_beneath(int root_fd, const std::string& relative, int flags,
                 BeneathMethod method = BeneathMethod::kSetting);

// RETURNS: whether openat2(2) works in this process (probed once: a kernel older than 5.6, or
// a seccomp filter that answers ENOSYS or EPERM, says no).
bool openat2_available();

}  // namespace feedbench
