// Small text helpers every layer prints with: one home each, so a message, a printed command
// and a result file spell a thing alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace feedbench {

// RETURNS: `word` as a POSIX shell reads it back: unchanged when plain, else single-quoted.
std::string shell_quote(const std::string& word);

// RETURNS: "1 file", "2 files": `n` and the noun for it.
std::string plural(std::size_t n, const char* one, const char* many);

// RETURNS: a selection's globs as a person reads them: "every file" (none), "include 'a/**',
// 'b/**'", and past `shown` globs the first ones and a count: "include 'a', 'b', 'c' and 597
// more" (a hot set of 600 exact paths once made an 18 KB line).
std::string selection_text(const std::vector<std::string>& globs, std::size_t shown = 3);
// RETURNS: the globs alone, quoted and counted as selection_text says them: "'a', 'b' and 2 more".
std::string globs_text(const std::vector<std::string>& globs, std::size_t shown = 3);

// RETURNS: the clauses of a verdict, a sentence joined by " — " and "; ", each on its own and
// trimmed, in order; a separator inside parentheses splits nothing. "AU 54% — limit: storage —
// the device delivered 38 MiB/s; the page cache served 5%" is four clauses: a console prints a
// verdict's details a clause a line.
std::vector<std::string> clauses(std::string_view text);

// RETURNS: `s` without leading and trailing white space (std::isspace).
std::string trim_space(std::string s);

// RETURNS: `text` safe to print on a terminal, for every console line that carries what a user,
// a file name or a trace chose: each C0 control (newline and tab too), DEL and byte that is not
// part of valid UTF-8 as \xNN; each C1 control (U+0080-U+009F), bidirectional override or
// isolate and line or paragraph separator as \uNNNN; printable UTF-8 kept as it is. A name
// holding ESC [2J then clears no screen, and one holding a newline forges no line.
std::string printable(std::string_view text);
// RETURNS: printable(`text`) but with its newlines kept: a block of console lines.
std::string printable_lines(std::string_view text);

// RETURNS: the current UTC time as "YYYY-MM-DDTHH:MM:SSZ" (ISO 8601, for documents), or with
// `compact` as "YYYYMMDDTHHMMSSZ" (for file names).
std::string utc_timestamp(bool compact = false);

// RETURNS: the local time as Google Benchmark's LocalDateTimeString writes it, a result's
// context.date: "2024-05-01T12:34:56+02:00".
std::string local_date_time();

}  // namespace feedbench
