// SPDX-License-Identifier: Apache-2.0
// The `exec` workload's command template: `--cmd "python train.py --bs {batch_size} --lr {lr}
// --resume {checkpoint}"`, split into words once, then expanded with each run's values and
// executed WITHOUT a shell.
//
// Splitting follows a POSIX shell's quoting but does nothing else: there are no variables,
// globs, pipes or redirections (`|`, `>`, `$HOME`, `*` are ordinary characters). Placeholders
// are expanded inside each word after splitting, so a value with spaces stays one argument and
// quoting never has to account for values. Placeholder syntax is the same inside and outside
// quotes: `{name}` is a value, `{{` and `}}` are literal braces.
#ifndef PARITY_STRESS_COMMAND_TEMPLATE_H_
#define PARITY_STRESS_COMMAND_TEMPLATE_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "core/text.h"  // SplitCommand: the template is split with it

namespace parity::stress {

/// Replaces {name} in each word with values[name] and "{{", "}}" with literal braces; the
/// result has one word per word of `words`. A number is written as the shortest text that
/// reads back as the same number: integers without ".0" (64), doubles as fmt "{}" writes them
/// (1e-05, 0.001, 2.5, and 1000 for 1000.0); a string as it is; a boolean as true or false.
/// A word that is exactly "{name}" whose value is the empty string stays one empty argument.
/// kInvalidInput for an unknown name (listing the known ones, with "did you mean"), a value
/// that is null, a list or a map, a "{" without its "}", a "}" that is not part of "}}", or
/// a "{...}" whose inside is not a name [a-z_][a-z0-9_]* (write {{...}} for literal braces).
Result<std::vector<std::string>> ExpandCommand(const std::vector<std::string>& words,
                                               const Json& values);

/// The placeholder names a template uses, each once, in order of first use. A word's scan stops
/// at its first malformed piece (a lone brace, "{1}"), which CheckCommand reports.
std::vector<std::string> PlaceholderNames(const std::vector<std::string>& words);

/// Checks a template before the run starts: every placeholder well formed (as ExpandCommand
/// requires) and in `known`. The same kInvalidInput messages as ExpandCommand.
Status CheckCommand(const std::vector<std::string>& words, std::span<const std::string> known);

/// The text of a value as ExpandCommand substitutes it; kInvalidInput for null, a list or a map.
Result<std::string> FormatValue(const Json& value);

}  // namespace parity::stress

#endif  // PARITY_STRESS_COMMAND_TEMPLATE_H_
