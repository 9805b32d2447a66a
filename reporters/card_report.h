// The qualification card as people read it (feedbench/results/card.h holds the document): the
// console card (one table of at most kConsoleWidth columns, then at most three lines of what to
// do), the same card as Markdown, cards side by side at the head of the HTML report, and what
// `feedbench diff` prints for two cards. Pure functions from cards to text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "feedbench/results/card.h"

namespace feedbench {

// The most lines of what to do a card prints under its table.
inline constexpr std::size_t kCardAdviceLines = 3;

// RETURNS: at most kCardAdviceLines sentences of what to do, most telling first: the cell that
// feeds fewest and what limits it, where the cache feeds more than the store (staging pays),
// the cells the budget left unmeasured. Empty for a card with no cells.
std::vector<std::string> card_advice(const Card& card);

// RETURNS: a sentence per workload with best reads or a stage (each path's best cold read rate
// of its files and the accelerators that is worth; the stage's rate, its time in epochs through
// the store, and the epochs after which it pays) and one per checkpoint (its write and cold
// restore, and the model's whole checkpoint at those rates). Empty for a card without them.
std::vector<std::string> card_storage_lines(const Card& card);

// RETURNS: the console card: a head line, the table (workload, path, state, accelerators fed
// with the repetitions' range, one accelerator's need, the limit; an unmeasured cell's reason
// in the limit's place), then "reads, staging and checkpoints:" with card_storage_lines (each
// wrapped), then "what to do:" and card_advice's lines. Every line at most
// kConsoleWidth columns (a long limit continues on lines under its column); text a user or a
// trace chose is printed through printable().
std::string card_console(const Card& card);

// RETURNS: the same card as a Markdown section: a heading, the table, the advice as a list.
std::string card_markdown(const Card& card);

// RETURNS: the HTML section at the head of a report of cards: one card's table whole, or for
// several one table of every (workload, path, state) with each card's accelerators fed and
// limit side by side. REQUIRES: names.size() == cards.size(), cards not empty.
std::string cards_html(const std::vector<Card>& cards, const std::vector<std::string>& names);

// RETURNS: what `feedbench diff CARD_A CARD_B` prints: the files, one row per cell (BASE's
// and NEW's accelerators fed with their ranges, the change, the verdict; a noisy cell's reason
// under it), the cells of one card only, and a closing line of counts. Lines within
// kConsoleWidth.
std::string format_card_diff(const CardComparison& comparison, const std::string& base_file,
                             const std::string& new_file);

}  // namespace feedbench
