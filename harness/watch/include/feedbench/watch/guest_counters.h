// The counters file watch's guests (the read recorder and the Python probe, inside the job) share
// with the watcher: what they could not record, and why. The watcher makes it in the records
// folder before the job starts, its blocks allocated (a full file system must not cost the
// counters too); each guest maps it MAP_SHARED (open, mmap, close at once: no descriptor held, and
// the mapping survives fork and a change of user). A guest whose process cannot open it (the job
// changed user before it exec'd) maps it through the descriptor the watcher left the job,
// $FEEDBENCH_WATCH_COUNTERS = "FD:TOKEN" (TOKEN the file's first word, in hex: a descriptor the job
// reused for a file of its own is never written). Header-only: the recorder links nothing of
// feedbench's. Every word is a little-endian 64-bit count.
#pragma once

#include <cstddef>
#include <cstdint>

namespace feedbench::guest_counters {

inline constexpr const char* kFileName = "counters";  // in $FEEDBENCH_WATCH_DIR
inline constexpr std::size_t kBytes = 12288;
inline constexpr std::size_t kWords = kBytes / 8;

// Word indexes.
inline constexpr std::size_t kToken = 0;         // the watcher's random token, never 0
inline constexpr std::size_t kImages = 1;        // the recorder's image serials, taken by atomic add
inline constexpr std::size_t kRecorderLost = 2;  // 3 words: records lost for no space, refused, other
inline constexpr std::size_t kUnrecorded = 5;    // calls forwarded unrecorded (made inside the recorder)
inline constexpr std::size_t kRefusedUid = 6;    // 1 + the effective uid last refused its records, 0: none
// The probe (Python: no atomic add) counts in a slot of its own process: pid, then its 3 reasons.
inline constexpr std::size_t kProbeSlots = 64;
inline constexpr std::size_t kProbeSlotWords = 4;
inline constexpr std::size_t kProbeSlotCount = (kWords - kProbeSlots) / kProbeSlotWords;

// Why a record was lost: the file system full (ENOSPC, EDQUOT), refused (EACCES, EPERM, EROFS: the
// job changed user, or a read-only folder), anything else.
enum Reason : std::size_t { kNoSpace = 0, kRefused = 1, kOther = 2 };

}  // namespace feedbench::guest_counters
