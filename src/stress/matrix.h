// SPDX-License-Identifier: Apache-2.0
// The stress matrix (`parity stress --matrix FILE.yaml`): the parameters a stress run changes
// while it runs, and the sampler that says which values are in force at a point of the run.
//
// A matrix file is a map of an optional seed and the parameters, by name:
//
//   seed: 7                        # optional, default 1; the CLI's --seed overrides it
//   parameters:
//     batch_size:
//       choice: [32, 64, 128, 256, 512, 1024, 2048]   # uniform choice; numbers or strings
//       every_steps: 100           # a new value every 100 steps ...
//     lr:
//       range: [1.0e-6, 1.0e-2]
//       scale: log                 # uniform (default) | log (log-uniform) | int (inclusive)
//       every_seconds: 60          # ... or every 60 seconds
//     devices:
//       range: [1, 8]
//       scale: int
//       schedule: {every_steps: 500}   # the same as every_steps: 500
//     dtype: float32               # a bare scalar: a constant
//
// A parameter is a constant (a bare number or string), a `choice` of 1 to 4096 numbers or
// strings, or a `range` of two numbers lo <= hi with a `scale`: uniform (a double in [lo, hi]),
// log (log-uniform: lo > 0, a double whose logarithm is uniform) or int (lo and hi whole
// numbers, each integer of [lo, hi] equally likely). `scale` applies only to a range; a range
// without it is uniform, so `range: [1, 8]` draws doubles such as 3.27 — say `scale: int` for
// whole numbers.
//
// A choice or range draws a new value at every epoch of its schedule: `every_steps: N` (a whole
// number >= 1; epoch = steps completed / N) or `every_seconds: S` (a number > 0; epoch =
// floor(seconds since the start / S)), given flat or inside `schedule:`, one of the two and only
// once. Without a schedule the value is drawn once, at the start, and stays.
//
// Values: a plain number in the file is a number (integers stay integers: 32, not 32.0); a
// quoted scalar ("32") or !!str one is a string; anything else (float32, true) is the text as a
// string. A plain `.nan`, `inf` or `nan` is rejected as a non-finite number (quote it for a
// string). Strings must not hold a NUL byte (they become command-line arguments).
//
// Parameter names match [a-z_][a-z0-9_]* (at most 64 characters): they are substituted as
// {name} into `exec` command templates (stress/command_template.h). At most 64 parameters.
// A file is at most 1 MiB. Every problem is kInvalidInput, "PATH: parameter 'NAME': problem"
// (or "PATH: problem" for the file as a whole), with "did you mean" for a mistyped key.
#ifndef PARITY_STRESS_MATRIX_H_
#define PARITY_STRESS_MATRIX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity::stress {

/// The largest matrix file LoadMatrix and ParseMatrix accept: 1 MiB.
inline constexpr std::size_t kMaxMatrixFileBytes = std::size_t{1} << 20;
/// The most parameters a matrix may have.
inline constexpr std::size_t kMaxMatrixParams = 64;
/// The most values one `choice` may list.
inline constexpr std::size_t kMaxMatrixChoices = 4096;
/// The longest parameter name.
inline constexpr std::size_t kMaxParamNameLength = 64;

/// How a parameter gets its values.
enum class ParamKind {
  kConstant,  ///< one value throughout
  kChoice,    ///< one of `choices`, each equally likely
  kRange,     ///< a number in [lo, hi], drawn on `scale`
};

/// How a range draws.
enum class Scale {
  kUniform,  ///< a double, uniform in [lo, hi]
  kLog,      ///< a double, exp(uniform in [ln lo, ln hi]); lo > 0
  kInt,      ///< an integer, uniform over lo, lo + 1, ..., hi
};

/// "uniform", "log" or "int", as a matrix file spells it.
std::string_view ScaleName(Scale scale);

/// One parameter of the matrix, as ParseMatrix checked it (or as built by hand; see
/// ValidateMatrix).
struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kConstant;
  /// kConstant: the value, a JSON number (integer or double) or string.
  Json value;
  /// kChoice: the values, each a JSON number or string.
  std::vector<Json> choices;
  /// kRange: the bounds, lo <= hi (whole numbers for kInt, lo > 0 for kLog).
  double lo = 0.0;
  double hi = 0.0;
  Scale scale = Scale::kUniform;
  /// A new value every this many steps; 0: not on a step schedule.
  std::int64_t every_steps = 0;
  /// A new value every this many seconds; 0: not on a time schedule. At most one of
  /// every_steps and every_seconds is set; with neither, the value is drawn once.
  double every_seconds = 0.0;
};

bool operator==(const ParamSpec& a, const ParamSpec& b);

/// A stress matrix: the seed its draws derive from and the parameters, in file order.
struct Matrix {
  std::uint64_t seed = 1;
  std::vector<ParamSpec> params;

  /// The parameter called `name`, or nullptr.
  const ParamSpec* Find(std::string_view name) const;
};

bool operator==(const Matrix& a, const Matrix& b);

/// Parses a matrix file's text. `path` names it in messages; every error is kInvalidInput.
/// An empty text, or one without `parameters:`, is an error; `parameters: {}` is a valid
/// matrix without parameters.
Result<Matrix> ParseMatrix(std::string_view yaml_text, std::string_view path);

/// Reads `path` (at most kMaxMatrixFileBytes) and parses it with ParseMatrix.
Result<Matrix> LoadMatrix(const std::string& path);

/// Parses one parameter's spec from YAML text, as it would appear under `parameters: NAME:` in
/// a file ("64", "float32", "{choice: [32, 64], every_steps: 10}", "{range: [1e-6, 1e-2],
/// scale: log}"), for a parameter given on the command line. The name is checked as a file's
/// would be. Errors read "ORIGIN: parameter 'NAME': problem".
Result<ParamSpec> ParseParam(std::string_view name, std::string_view yaml_text,
                             std::string_view origin);

/// A constant parameter.
ParamSpec ConstantParam(std::string name, Json value);

/// A flag's text as a value, the way a plain YAML scalar reads: "64" an integer, "1e-3" a
/// double, anything else (including "nan" and "inf") the text as a string.
Json ScalarValue(std::string_view text);

/// Checks a matrix built by hand against the rules ParseMatrix applies (names, counts, bounds,
/// schedules, values). `origin` names where it came from in messages ("--param").
Status ValidateMatrix(const Matrix& matrix, std::string_view origin);

/// Replaces the parameter of the same name in `matrix`, or appends `param` when there is none:
/// how a command-line parameter overrides the file's.
void SetParam(Matrix* matrix, ParamSpec param);

/// {"seed": .., "parameters": {NAME: SPEC, ..}}, SPEC as the file spells it (a constant bare;
/// {"choice": [..], "every_steps": N}; {"range": [lo, hi], "scale": "log", "every_seconds": S});
/// int-scale bounds as JSON integers. It is itself a valid matrix file: ParseMatrix of its
/// Dump() gives back an equal Matrix.
Json MatrixToJson(const Matrix& matrix);

/// The values in force at a point of a run. A value is a pure function of (seed, parameter
/// name, worker, epoch), with epoch = step / every_steps or floor(seconds / every_seconds) (0
/// for constants and once-drawn parameters), drawn with a counter-based generator (SplitMix64
/// of a hash of the four), so that a run can be replayed and a restarted worker, or a new
/// sampler object, gets the same values for the same epoch. Different workers draw
/// independently; pass the same worker number to every worker for values shared by all.
/// Negative or NaN steps and seconds count as 0.
class MatrixSampler {
 public:
  /// `seed` is the CLI's --seed when given, else matrix.seed.
  MatrixSampler(const Matrix& matrix, std::uint64_t seed);

  /// Values for worker `worker` at `step` (steps completed so far, from 0) and `seconds` since
  /// the start, as a JSON object name -> value in the matrix's order: constants and choices
  /// as given (integers as JSON integers, strings as strings), int ranges as JSON integers,
  /// uniform and log ranges as doubles within [lo, hi].
  Json ValuesAt(int worker, std::int64_t step, double seconds) const;

  /// Each parameter's epoch at (step, seconds), in the matrix's order.
  std::vector<std::int64_t> EpochsAt(std::int64_t step, double seconds) const;

  /// True when some parameter's epoch differs between (step0, seconds0) and (step1, seconds1),
  /// whether or not the new draw happens to equal the old one.
  bool CrossesEpoch(std::int64_t step0, double seconds0, std::int64_t step1, double seconds1) const;

  /// True when the values for `worker` differ between (step0, seconds0) and (step1, seconds1):
  /// an epoch boundary was crossed and some parameter's new draw is not the old value (the
  /// supervisor then restarts the worker with the new values). A choice can draw the value it
  /// had; then there is nothing to restart for.
  bool Changes(int worker, std::int64_t step0, double seconds0, std::int64_t step1,
               double seconds1) const;

  /// How many seconds after `seconds` the next every_seconds epoch of any parameter begins:
  /// ValuesAt at `seconds` plus the result is in the new epoch. Always > 0; none when no
  /// parameter has a time schedule (or the next boundary is past 2^53 epochs).
  std::optional<double> NextTimeBoundary(double seconds) const;

  /// The smallest step count after `step` at which some every_steps parameter enters a new
  /// epoch (a multiple of its every_steps), or none when no parameter has a step schedule.
  std::optional<std::int64_t> NextStepBoundary(std::int64_t step) const;

  std::uint64_t seed() const { return seed_; }
  const Matrix& matrix() const { return matrix_; }

 private:
  Json Draw(const ParamSpec& param, std::size_t index, int worker, std::int64_t epoch) const;

  Matrix matrix_;
  std::uint64_t seed_;
  std::vector<std::uint64_t> name_hashes_;  // per parameter
};

}  // namespace parity::stress

#endif  // PARITY_STRESS_MATRIX_H_
