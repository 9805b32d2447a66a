#include "feedbench/results/stored_histogram.h"

#include "feedbench/base/error.h"

namespace feedbench {

StoredHistogram::StoredHistogram(const Histogram& h)
    : present_(true), compact_(h.to_compact_json("ns").dump()) {
  compact_.shrink_to_fit();
}

StoredHistogram::StoredHistogram(const std::optional<Histogram>& h) {
  if (h) *this = StoredHistogram(*h);
}

StoredHistogram StoredHistogram::from_compact_json(const nlohmann::json& compact, const std::string& where) {
  Histogram::from_compact_json(compact, where);  // refused here, naming its place, or never
  StoredHistogram out;
  out.present_ = true;
  out.compact_ = compact.dump();
  out.compact_.shrink_to_fit();  // one per repetition: a dump's spare capacity adds up
  return out;
}

Histogram StoredHistogram::operator*() const {
  FB_CHECK(present_, "a latency histogram read where there is none");
  return Histogram::from_compact_json(compact_json(), "latency histogram");
}

StoredHistogram::operator std::optional<Histogram>() const {
  if (!present_) return std::nullopt;
  return **this;
}

nlohmann::json StoredHistogram::compact_json() const {
  FB_CHECK(present_, "a latency histogram read where there is none");
  return nlohmann::json::parse(compact_);
}

}  // namespace feedbench
