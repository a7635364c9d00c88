// SPDX-License-Identifier: Apache-2.0
// The `exec` workload's command template: SplitCommand's shell-like quoting, ExpandCommand's
// placeholders and number formatting, PlaceholderNames and CheckCommand.
#include "stress/command_template.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "stress/matrix.h"

namespace parity::stress {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view text) {
  Result<Words> words = SplitCommand(text);
  EXPECT_TRUE(words.ok()) << text << ": " << words.status().message();
  return words.ok() ? std::move(words).value() : Words{};
}

void ExpectSplitError(std::string_view text, const std::string& part) {
  Result<Words> words = SplitCommand(text);
  ASSERT_FALSE(words.ok()) << text;
  EXPECT_EQ(words.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(words.status().message().find(part), std::string::npos)
      << "'" << part << "' not in: " << words.status().message();
}

Words Expand(const Words& words, const Json& values) {
  Result<Words> out = ExpandCommand(words, values);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::move(out).value() : Words{};
}

void ExpectExpandError(const Words& words, const Json& values,
                       const std::vector<std::string>& parts) {
  Result<Words> out = ExpandCommand(words, values);
  ASSERT_FALSE(out.ok()) << words[0];
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidInput);
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status().message();
  }
}

// --- SplitCommand ---------------------------------------------------------------------------

TEST(SplitCommand, SplitsOnBlanks) {
  EXPECT_EQ(Split("python train.py --bs {batch_size}"),
            (Words{"python", "train.py", "--bs", "{batch_size}"}));
  EXPECT_EQ(Split("  a \t b\n\nc\r\v\fd  "), (Words{"a", "b", "c", "d"}));
  EXPECT_EQ(Split("one"), (Words{"one"}));
}

TEST(SplitCommand, SingleQuotesKeepEverything) {
  EXPECT_EQ(Split(R"('a b' 'c\d' '"' '$HOME *')"), (Words{"a b", R"(c\d)", "\"", "$HOME *"}));
  EXPECT_EQ(Split("'line\nbreak'"), (Words{"line\nbreak"}));
}

TEST(SplitCommand, DoubleQuotesKeepAllButEscapedQuoteAndBackslash) {
  EXPECT_EQ(Split(R"("a b" "say \"hi\"" "back\\slash" "keep\n\$x" "it's")"),
            (Words{"a b", "say \"hi\"", R"(back\slash)", R"(keep\n\$x)", "it's"}));
  EXPECT_EQ(Split(R"("a\" b")"), (Words{"a\" b"}));
  EXPECT_EQ(Split(R"("ends in \\")"), (Words{R"(ends in \)"}));
}

TEST(SplitCommand, BackslashOutsideQuotesEscapesOneCharacter) {
  EXPECT_EQ(Split(R"(a\ b c\'d \"e\" \\ \x)"), (Words{"a b", "c'd", "\"e\"", "\\", "x"}));
  // A backslash-newline joins the lines; a lone escaped newline is no word.
  EXPECT_EQ(Split("python \\\n  train.py a\\\nb"), (Words{"python", "train.py", "ab"}));
}

TEST(SplitCommand, AdjacentPiecesFormOneWord) {
  EXPECT_EQ(Split("a'b c'd"), (Words{"ab cd"}));
  EXPECT_EQ(Split(R"('x'"y"z)"), (Words{"xyz"}));
  EXPECT_EQ(Split(R"(--lr="{lr}" --name='my run')"), (Words{"--lr={lr}", "--name=my run"}));
}

TEST(SplitCommand, EmptyQuotesAreAnEmptyWord) {
  EXPECT_EQ(Split("a '' \"\" b"), (Words{"a", "", "", "b"}));
  EXPECT_EQ(Split("''"), (Words{""}));
}

TEST(SplitCommand, NoShellSyntax) {
  EXPECT_EQ(Split("a|b > c; d && $HOME *.py `x`"),
            (Words{"a|b", ">", "c;", "d", "&&", "$HOME", "*.py", "`x`"}));
}

TEST(SplitCommand, UnicodePassesThrough) {
  EXPECT_EQ(Split("échec 'λ x' \"日本\" 🚀"), (Words{"échec", "λ x", "日本", "🚀"}));
  // Bytes that are not UTF-8 too: arguments are bytes.
  EXPECT_EQ(Split("\xff\xfe"), (Words{"\xff\xfe"}));
}

TEST(SplitCommand, Errors) {
  ExpectSplitError("a 'b c", "unterminated '");
  ExpectSplitError("a 'b c", "byte 3");
  ExpectSplitError("a \"b c", "unterminated \"");
  ExpectSplitError(R"(a "b\")", "unterminated \"");  // the escaped quote does not close it
  ExpectSplitError("a b\\", "ends in a backslash");
  ExpectSplitError("", "empty");
  ExpectSplitError(" \t\n ", "empty");
  ExpectSplitError("\\\n", "empty");
  ExpectSplitError(std::string_view("a\0b", 3), "NUL byte");
}

// --- ExpandCommand --------------------------------------------------------------------------

TEST(ExpandCommand, SubstitutesValuesInsideWords) {
  const Json values = {{"batch_size", 256}, {"lr", 1e-05}, {"checkpoint", "/tmp/ck pt/3"}};
  EXPECT_EQ(
      Expand(Split("python train.py --bs {batch_size} --lr={lr} --resume {checkpoint}"), values),
      (Words{"python", "train.py", "--bs", "256", "--lr=1e-05", "--resume",
             "/tmp/ck pt/3"}));  // a value with a space stays one argument
  EXPECT_EQ(Expand({"{batch_size}{batch_size}", "x{lr}y"}, values), (Words{"256256", "x1e-05y"}));
}

TEST(ExpandCommand, FormatsNumbersShortest) {
  const Json values = {{"i", 64},
                       {"neg", -3},
                       {"big", std::numeric_limits<std::uint64_t>::max()},
                       {"whole", 1000.0},
                       {"milli", 0.001},
                       {"tiny", 1e-5},
                       {"third", 1.0 / 3.0},
                       {"huge", 1e16},
                       {"half", 2.5},
                       {"yes", true},
                       {"s", "float32"}};
  EXPECT_EQ(Expand({"{i}", "{neg}", "{big}", "{whole}", "{milli}", "{tiny}", "{third}", "{huge}",
                    "{half}", "{yes}", "{s}"},
                   values),
            (Words{"64", "-3", "18446744073709551615", "1000", "0.001", "1e-05",
                   "0.3333333333333333", "1e+16", "2.5", "true", "float32"}));
  // Shortest text that reads back as the same double.
  const double lr = 0.0012345678901234567;
  const Words out = Expand({"{lr}"}, Json{{"lr", lr}});
  EXPECT_EQ(std::stod(out[0]), lr);
}

TEST(ExpandCommand, EmptyValueStaysOneEmptyArgument) {
  EXPECT_EQ(Expand({"run", "{tag}", "--x={tag}"}, Json{{"tag", ""}}), (Words{"run", "", "--x="}));
}

TEST(ExpandCommand, DoubledBracesAreLiteral) {
  EXPECT_EQ(Expand({"{{", "}}", "{{bs}}", "{{{bs}}}", R"({{"a": {bs}}})"}, Json{{"bs", 8}}),
            (Words{"{", "}", "{bs}", "{8}", R"({"a": 8})"}));
}

TEST(ExpandCommand, Errors) {
  const Json values = {{"batch_size", 32}, {"lr", 0.1}};
  ExpectExpandError({"--bs", "{batch_sise}"}, values,
                    {"word 2 ('{batch_sise}')", "unknown placeholder {batch_sise}",
                     "did you mean {batch_size}?", "known: batch_size, lr"});
  ExpectExpandError({"{zzz}"}, values, {"unknown placeholder {zzz}", "known: batch_size, lr"});
  ExpectExpandError({"{x}"}, Json::object(), {"no values to substitute"});
  ExpectExpandError({"{lr"}, values, {"'{' at byte 1 has no '}'"});
  ExpectExpandError({"lr}"}, values, {"'}' at byte 3 has no '{'"});
  ExpectExpandError({"{}"}, values, {"'{}' is not a placeholder"});
  ExpectExpandError({"{1}"}, values, {"'{1}' is not a placeholder", "{{"});
  ExpectExpandError({"{Lr}"}, values, {"'{Lr}' is not a placeholder"});
  ExpectExpandError({"{ lr }"}, values, {"is not a placeholder"});
  ExpectExpandError({R"({"a": 1})"}, values, {"is not a placeholder"});
  ExpectExpandError({"{n}"}, Json{{"n", nullptr}}, {"{n}: the value is null"});
  ExpectExpandError({"{n}"}, Json{{"n", Json::array({1})}}, {"{n}: the value is array"});
}

// --- PlaceholderNames and CheckCommand -------------------------------------------------------

TEST(PlaceholderNames, InOrderOfFirstUse) {
  EXPECT_EQ(PlaceholderNames(Split("run {b} --x={a}{b} {{c}} '{d}' {a}")), (Words{"b", "a", "d"}));
  EXPECT_TRUE(PlaceholderNames({"plain", "{{x}}"}).empty());
  // A word's scan stops at its first malformed piece.
  EXPECT_EQ(PlaceholderNames({"{a}{1}{b}", "{c}"}), (Words{"a", "c"}));
}

TEST(CheckCommand, ChecksNamesAndSyntaxWithoutValues) {
  const Words known = {"batch_size", "lr", "checkpoint"};
  EXPECT_TRUE(CheckCommand(Split("t --bs {batch_size} --resume {checkpoint} {{x}}"), known).ok());
  Status status = CheckCommand({"t", "{lrr}"}, known);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  EXPECT_NE(status.message().find("did you mean {lr}?"), std::string::npos) << status.message();
  status = CheckCommand({"{lr"}, known);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("has no '}'"), std::string::npos) << status.message();
  EXPECT_EQ(status.WithContext("--cmd").message().rfind("--cmd: word 1", 0), 0u);
}

TEST(CommandTemplate, ExpandsWithSampledValues) {
  Result<Matrix> matrix = ParseMatrix(R"(
parameters:
  batch_size: {choice: [32, 64], every_steps: 10}
  lr: {range: [1.0e-6, 1.0e-2], scale: log, every_steps: 10}
  devices: {range: [1, 8], scale: int}
)",
                                      "m.yaml");
  ASSERT_TRUE(matrix.ok()) << matrix.status().message();
  const Words words = Split("python train.py --bs {batch_size} --lr {lr} -n {devices}");
  std::vector<std::string> known;
  for (const ParamSpec& param : matrix->params) known.push_back(param.name);
  ASSERT_TRUE(CheckCommand(words, known).ok());
  const MatrixSampler sampler(*matrix, 1);
  for (int step = 0; step < 100; step += 10) {
    const Json values = sampler.ValuesAt(0, step, 0.0);
    const Words argv = Expand(words, values);
    ASSERT_EQ(argv.size(), words.size());
    EXPECT_TRUE(argv[3] == "32" || argv[3] == "64") << argv[3];
    EXPECT_EQ(std::stod(argv[5]), values["lr"].get<double>());   // round-trips exactly
    EXPECT_EQ(argv[7].find('.'), std::string::npos) << argv[7];  // an integer
  }
}

}  // namespace
}  // namespace parity::stress
