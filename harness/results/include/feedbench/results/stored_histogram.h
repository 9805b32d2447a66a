// A repetition's latency histogram as a result document holds it: the compact form the file
// stores (a few hundred bytes), decoded only when read. A decoded Histogram is 58 KiB whatever
// it holds (7424 bins of 8 bytes), so a document of decoded ones took about 28 times the file's
// size (`diff` and `report` of a 68 MB result: several GB); stored compact, a document takes
// about its file's size.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "feedbench/base/histogram.h"

namespace feedbench {

class StoredHistogram {
 public:
  // What -> yields: a decoded copy that lives until the end of the full expression.
  struct Decoded {
    Histogram histogram;
    const Histogram* operator->() const { return &histogram; }
  };

  StoredHistogram() = default;
  // Implicit, as std::optional<Histogram> was: `entry.latency = histogram` keeps working.
  StoredHistogram(const Histogram& h);                 // NOLINT(google-explicit-constructor)
  StoredHistogram(const std::optional<Histogram>& h);  // NOLINT(google-explicit-constructor)

  // REQUIRES: `compact` is Histogram::to_compact_json's form. RETURNS: it, stored as it is,
  // after decoding it once: throws InputError naming `where` and the member, as
  // Histogram::from_compact_json does, on one that does not decode.
  static StoredHistogram from_compact_json(const nlohmann::json& compact, const std::string& where);

  // Read as a std::optional<Histogram> is read, so that its readers compile unchanged; each *
  // and -> decodes a copy (58 KiB, microseconds): a reader decodes once per use, not per bin.
  bool has_value() const { return present_; }
  explicit operator bool() const { return present_; }
  void reset() { *this = StoredHistogram(); }
  // REQUIRES: has_value(). RETURNS: the histogram, decoded.
  Histogram operator*() const;
  Decoded operator->() const { return {**this}; }
  // RETURNS: the decoded histogram, or nullopt.
  operator std::optional<Histogram>() const;  // NOLINT(google-explicit-constructor)

  // REQUIRES: has_value(). RETURNS: the compact form, what a result file stores.
  nlohmann::json compact_json() const;

 private:
  bool present_ = false;
  std::string compact_;  // the compact form's JSON text: its bytes, without a DOM's overhead
};

}  // namespace feedbench
