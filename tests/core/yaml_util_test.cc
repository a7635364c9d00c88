// SPDX-License-Identifier: Apache-2.0
#include "core/yaml_util.h"

#include <gtest/gtest.h>

#include <string>

namespace parity {
namespace {

YAML::Node Doc(const std::string& text) {
  Result<YAML::Node> root = LoadYaml(text, "t.yaml");
  EXPECT_TRUE(root.ok()) << root.status().message();
  return root.ok() ? *root : YAML::Node();
}

// The message of a failed `result`, or "ok" when it did not fail.
template <typename T>
std::string Problem(const Result<T>& result) {
  if (result.ok()) return "ok";
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidInput);
  return result.status().message();
}

constexpr std::string_view kKeys[] = {"name", "value", "every_steps"};

TEST(YamlUtil, LoadNamesTheFileAndTheLine) {
  EXPECT_EQ(
      Problem(LoadYaml("a: 1\nb: [\n", "t.yaml")).rfind("t.yaml: line 3: not valid YAML: ", 0), 0u);
  EXPECT_EQ(Problem(LoadYaml(std::string("a: 1\0", 5), "t.yaml")), "t.yaml: holds a NUL byte");
}

TEST(YamlUtil, ProblemsCarryTheOneBasedLineOfTheirNode) {
  const YAML::Node root = Doc("a: 1\nb:\n  c: x\n");
  EXPECT_EQ(YamlAt(root["b"]["c"], "bad").message(), "line 3: bad");
  EXPECT_EQ(YamlAt(YAML::Node(), "bad").message(), "bad");  // built by hand: no line
  const Status in = YamlInContext(YamlAt(root["a"], "'a' is odd"), "rule 'r'");
  EXPECT_EQ(in.message(), "line 1: rule 'r': 'a' is odd");
  EXPECT_EQ(in.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(YamlInContext(Status::Invalid("", "no line"), "rule 'r'").message(),
            "rule 'r': no line");
  EXPECT_EQ(YamlProblem(YamlAt(root["a"], "'a' is odd")), "'a' is odd");
  EXPECT_EQ(YamlProblem(Status::Invalid("", "no line")), "no line");
}

TEST(YamlUtil, DescribeQuotesScalarsAndNamesTheRest) {
  const YAML::Node root = Doc("s: \"a\\x01b\"\nl: [1]\nm: {a: 1}\nn:\nq: '5'\nu: 5\n");
  EXPECT_EQ(YamlDescribe(root["s"]), "'a\\x01b'");
  EXPECT_EQ(YamlDescribe(root["l"]), "a list");
  EXPECT_EQ(YamlDescribe(root["m"]), "a map");
  EXPECT_EQ(YamlDescribe(root["n"]), "empty");
  EXPECT_TRUE(YamlQuoted(root["q"]));
  EXPECT_FALSE(YamlQuoted(root["u"]));
  EXPECT_FALSE(YamlQuoted(root["l"]));
}

TEST(YamlUtil, StringsAreNonEmptyScalars) {
  const YAML::Node root = Doc("a: text\nb: ''\nc: [x]\nd: 12\n");
  EXPECT_EQ(*YamlString(root["a"], "'a'"), "text");
  EXPECT_EQ(*YamlString(root["d"], "'d'"), "12");
  EXPECT_EQ(Problem(YamlString(root["b"], "'b'")), "line 2: 'b' is empty");
  EXPECT_EQ(Problem(YamlString(root["c"], "'c'")), "line 3: 'c' is a list, not a string");
}

TEST(YamlUtil, NumbersAreFiniteDecimals) {
  const YAML::Node root = Doc(
      "a: 85\nb: +1.5e-3\nc: -2\nd: warm\ne: .inf\nf: .nan\ng: 1e400\nh: [1]\ni: nan\nj: -.inf\n"
      "k: +-1\n");
  EXPECT_EQ(*YamlNumber(root["a"], "'a'"), 85.0);
  EXPECT_EQ(*YamlNumber(root["b"], "'b'"), 1.5e-3);
  EXPECT_EQ(*YamlNumber(root["c"], "'c'"), -2.0);
  EXPECT_EQ(Problem(YamlNumber(root["d"], "'d'")), "line 4: 'd' is 'warm', not a number");
  EXPECT_EQ(Problem(YamlNumber(root["e"], "'e'")), "line 5: 'e' is '.inf', not finite");
  EXPECT_EQ(Problem(YamlNumber(root["f"], "'f'")), "line 6: 'f' is '.nan', not finite");
  EXPECT_EQ(Problem(YamlNumber(root["g"], "lo of 'g'")),
            "line 7: lo of 'g' is '1e400', out of the range of a double");
  EXPECT_EQ(Problem(YamlNumber(root["h"], "'h'")), "line 8: 'h' is a list, not a number");
  EXPECT_EQ(Problem(YamlNumber(root["i"], "'i'")), "line 9: 'i' is 'nan', not finite");
  EXPECT_EQ(Problem(YamlNumber(root["j"], "'j'")), "line 10: 'j' is '-.inf', not finite");
  EXPECT_EQ(Problem(YamlNumber(root["k"], "'k'")), "line 11: 'k' is '+-1', not a number");
}

TEST(YamlUtil, IntegersAreWholeNumbers) {
  const YAML::Node root = Doc("a: 12\nb: +3\nc: -4\nd: 2.5\ne: 1e2\nf: 99999999999999999999\n");
  EXPECT_EQ(*YamlInteger(root["a"], "'a'"), 12);
  EXPECT_EQ(*YamlInteger(root["b"], "'b'"), 3);
  EXPECT_EQ(*YamlInteger(root["c"], "'c'"), -4);
  EXPECT_EQ(Problem(YamlInteger(root["d"], "'d'")), "line 4: 'd' is '2.5', not a whole number");
  EXPECT_EQ(Problem(YamlInteger(root["e"], "'e'")), "line 5: 'e' is '1e2', not a whole number");
  EXPECT_EQ(Problem(YamlInteger(root["f"], "'f'")),
            "line 6: 'f' is '99999999999999999999', not a whole number");
}

TEST(YamlUtil, ListsHaveOneToLimitItems) {
  const YAML::Node root = Doc("a: [1, 2]\nb: []\nc: 5\nd: [1, 2, 3]\n");
  EXPECT_EQ(YamlList(root["a"], "'a'")->size(), 2u);
  EXPECT_EQ(Problem(YamlList(root["b"], "'b'")), "line 2: 'b' is an empty list");
  EXPECT_EQ(Problem(YamlList(root["c"], "'c'")), "line 3: 'c' is '5', not a list");
  EXPECT_EQ(Problem(YamlList(root["d"], "'d'", 2)), "line 4: 'd' has 3 items; at most 2");
}

TEST(YamlUtil, FieldsFindAndRequireKeys) {
  const YAML::Node root = Doc("x: 0\nmap:\n  name: a\n  value:\n");
  Result<YamlFields> fields = YamlFields::Read(root["map"], "the map", kKeys);
  ASSERT_TRUE(fields.ok()) << fields.status().message();
  EXPECT_EQ(fields->size(), 2u);
  ASSERT_NE(fields->Find("name"), nullptr);
  EXPECT_EQ(fields->Find("name")->Scalar(), "a");
  ASSERT_NE(fields->Find("value"), nullptr);  // given, empty
  EXPECT_TRUE(fields->Find("value")->IsNull());
  EXPECT_EQ(fields->Find("every_steps"), nullptr);
  EXPECT_EQ(fields->Require("name")->Scalar(), "a");
  EXPECT_EQ(Problem(fields->Require("value")), "line 3: has no 'value'");
  EXPECT_EQ(Problem(fields->Require("every_steps")), "line 3: has no 'every_steps'");
}

TEST(YamlUtil, FieldsRefuseUnknownRepeatedAndNonStringKeys) {
  const auto read = [](const std::string& text) {
    return Problem(YamlFields::Read(Doc(text), "a rule", kKeys));
  };
  EXPECT_EQ(read("name: a\nvaleu: 1\n"),
            "line 2: unknown key 'valeu' (did you mean 'value'?); the keys: name, value, "
            "every_steps");
  EXPECT_EQ(read("name: a\nzzz: 1\n"),
            "line 2: unknown key 'zzz'; the keys: name, value, every_steps");
  EXPECT_EQ(read("name: a\n\nname: b\n"), "line 3: 'name' is given twice");
  EXPECT_EQ(read("name: a\n[1]: b\n"), "line 2: a key is not a string");
  EXPECT_EQ(read("- name\n"), "line 1: a rule is a list, not a map");
  EXPECT_EQ(Problem(YamlFields::Read(Doc("a: 1\nfp33: 2\n"), "'peaks'", kKeys, "metric")),
            "line 1: unknown metric 'a'; the metrics: name, value, every_steps");
  EXPECT_EQ(Problem(YamlFields::Read(Doc("{[x]: 1}"), "'peaks'", kKeys, "metric")),
            "line 1: a metric is not a string");
}

}  // namespace
}  // namespace parity
