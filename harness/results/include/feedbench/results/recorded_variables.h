// What a result records of the environment it ran in. Results are files people commit and
// share, so they hold the variables that change a run and nothing else, and never a credential:
// - the ${VAR}s the config expanded (they are part of what was run),
// - Google Benchmark's BENCHMARK_* flags,
// - feedbench's own FEEDBENCH_* settings and hooks (env_settings.h's list), no other FEEDBENCH_*.
// A name that looks like a credential, or one named by --redact, is recorded as set with
// kValueWithheld, and its value is taken out of the resolved config the result also holds.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace feedbench {

// What a withheld variable's value reads as in a result, its Markdown and its report.
inline constexpr std::string_view kValueWithheld = "(set; value not recorded)";

// RETURNS: whether `name` looks like a credential's: it holds TOKEN, SECRET, PASSWORD, PASSWD,
// PASSPHRASE, CREDENTIAL, AUTH or KEY, in any case ("FEEDBENCH_TOKEN", "aws_secret_access_key").
bool looks_like_credential(std::string_view name);

// REQUIRES: names: --redact's values.
// Throws InputError ("--redact: ...") for a name that is not a variable's name ([A-Za-z_]
// then [A-Za-z0-9_]*), e.g. "A=B" or "".
void check_redact_names(const std::vector<std::string>& names);

// REQUIRES: names: watch's --redact values. Throws InputError ("--redact: ...") for a name that
// is neither a variable's nor an option's: letters, digits, '_' and '-', not starting with a
// digit or '-' once the option's leading dashes are taken off ("HF_TOKEN", "--api-key").
void check_redact_command_names(const std::vector<std::string>& names);

// RETURNS: the command line `argv` (a watched job's, or the verb's own) as a result, a trace or
// a report may hold it: where a credential-like name (looks_like_credential) or a name of
// `redact` is set, its value is kValueWithheld:
// - an assignment NAME=VALUE (env HF_TOKEN=hf_...), and an option --NAME=VALUE, -NAME=VALUE
//   (an argument that starts with one: its value to the argument's end, spaces and all);
// - an option --NAME (or -NAME) given alone: the next argument, unless it starts with '-';
// - the same inside an argument holding spaces (a shell's `bash -c '...'`), a word at a time,
//   a quoted value to its closing quote.
// Names match without regard to case, '-' and '_' alike (--redact api-key withholds
// --api-key, --api_key and API_KEY=). Then the value of every variable of `environ` (a
// NULL-terminated NAME=VALUE array, or null) whose name is credential-like or in `redact`, 8
// characters or longer, reads as ${NAME} wherever it still appears (a token passed by value).
std::vector<std::string> withhold_in_command(const std::vector<std::string>& argv,
                                             const std::vector<std::string>& redact,
                                             const char* const* environ);

struct RecordedVariables {
  std::map<std::string, std::string> recorded;  // name -> value, or kValueWithheld
  std::map<std::string, std::string> withheld;  // name -> the value kept out of the result
};

// REQUIRES: expanded: the ${VAR}s the config expanded and their values (Config::expanded_env);
// redact: names checked by check_redact_names; environ: a NULL-terminated NAME=VALUE array.
// RETURNS: the variables a result records (see above) and the values it must not hold.
RecordedVariables recorded_variables(const std::map<std::string, std::string>& expanded,
                                     const std::vector<std::string>& redact, const char* const* environ);

// Replaces, in every string within `j` (keys included), each withheld value by ${NAME}, the
// longest value first, so a resolved config reads as it was written where it held a secret.
void withhold_values(nlohmann::json& j, const std::map<std::string, std::string>& withheld);

}  // namespace feedbench
