// What a round read against what it planned, and how it opened its files: one tally for the
// runner's rounds (RoundStats), the loader's runs (LoaderResult) and the record every family
// leaves of them (CaseRun::record_reads), so that a shortfall or an open is counted one way.
#pragma once

#include <cstdint>
#include <string>

namespace feedbench {

struct ReadTally {
  std::uint64_t bytes = 0;  // bytes actually read
  // What the reads asked for within each file's size at the scan (a read past a file's end is
  // planned short); a round that read less is not a measurement of the selection.
  std::uint64_t bytes_planned = 0;
  std::uint64_t short_reads = 0;     // reads that returned less than planned (a file shrank)
  std::uint64_t files_vanished = 0;  // opens that found the file gone (ENOENT) since the scan
  std::string incomplete;            // the first shortfall, naming what fell short; "" when none
  std::uint64_t files_opened = 0;    // opens of files
  std::uint64_t noatime_opens = 0;   // of `files_opened`, opened with O_NOATIME
  // False for reads of no file by design (the loader's calibration copies from memory): its
  // opens, none, say nothing about access times. A property of the whole, which merge leaves.
  bool reads_files = true;

  // RETURNS: true when every planned byte was read (a file that grew may give more).
  bool complete() const { return short_reads == 0 && files_vanished == 0 && bytes >= bytes_planned; }

  // Adds the counts of `part` (one worker's, trainer's or rank's tally) to this one's; the first
  // shortfall's text stays the first one met.
  void merge(const ReadTally& part) {
    bytes += part.bytes;
    bytes_planned += part.bytes_planned;
    short_reads += part.short_reads;
    files_vanished += part.files_vanished;
    if (incomplete.empty()) incomplete = part.incomplete;
    files_opened += part.files_opened;
    noatime_opens += part.noatime_opens;
  }
};

}  // namespace feedbench
