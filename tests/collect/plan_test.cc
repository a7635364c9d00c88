// SPDX-License-Identifier: Apache-2.0
// The plan parser (levels, by_level, errors with lines) and exec's metric extraction.
#include "collect/plan.h"

#include <gtest/gtest.h>

#include "collect/metric_extract.h"

namespace parity::collect {
namespace {

constexpr char kPlan[] = R"(plan: t
stages:
  - kind: bench
    suites: stream
    n: 100
    reps: 3
    by_level:
      3: {reps: 30}
      2: {n: 200, full: true}
  - name: run
    kind: exec
    level: 2
    command: "python3 'a b.py' --out {out}"
    env: {OMP_NUM_THREADS: 1}
)";

constexpr char kVarPlan[] = R"(plan: v
vars: {threads: 1, config: reference}
stages:
  - kind: bench
    suites: stream
    threads: "{var.threads}"
  - name: run
    kind: exec
    command: [python3, model.py, "--config={var.config}", "{out}"]
)";

TEST(Plan, VarsReplacePlaceholdersWithTheirTypes) {
  auto plan = ParsePlan(kVarPlan, "p.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->stages[0].params["threads"], Json(1));
  EXPECT_EQ(plan->stages[1].params["command"],
            Json::array({"python3", "model.py", "--config=reference", "{out}"}));
  auto other = ParsePlan(kVarPlan, "p.yaml", {{"threads", "2"}, {"config", "optimised"}});
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(other->stages[0].params["threads"], Json(2));
  EXPECT_EQ(other->stages[1].params["command"][2], "--config=optimised");
  EXPECT_EQ(PlanToJson(*other)["vars"]["config"], "optimised");
}

TEST(Plan, VarsAreChecked) {
  auto unknown = ParsePlan(kVarPlan, "p.yaml", {{"thread", "2"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown var 'thread' (did you mean 'threads'?)"),
            std::string::npos)
      << unknown.status().message();
  auto bad_value = ParsePlan(kVarPlan, "p.yaml", {{"threads", "many"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("line 6"), std::string::npos)
      << bad_value.status().message();
  auto undeclared =
      ParsePlan("plan: v\nstages:\n  - kind: exec\n    command: \"a {var.x}\"\n", "p.yaml");
  ASSERT_FALSE(undeclared.ok());
  EXPECT_NE(undeclared.status().message().find("line 4: unknown var 'x'"), std::string::npos)
      << undeclared.status().message();
}

TEST(Plan, LevelsApplyInOrder) {
  auto plan = ParsePlan(kPlan, "/tmp/p/plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->name, "t");
  EXPECT_EQ(plan->dir, "/tmp/p");
  ASSERT_EQ(plan->stages.size(), 2u);
  const PlanStage& bench = plan->stages[0];
  EXPECT_EQ(bench.name, "bench");
  EXPECT_EQ(bench.level, 1);
  EXPECT_EQ(bench.line, 3);
  EXPECT_EQ(bench.params["suites"], Json::array({"stream"}));
  EXPECT_EQ(EffectiveParams(bench, 1), Json::parse(R"({"suites":["stream"],"n":100,"reps":3})"));
  const Json at2 = EffectiveParams(bench, 2);
  EXPECT_EQ(at2["n"], 200);
  EXPECT_EQ(at2["reps"], 3);
  EXPECT_EQ(at2["full"], true);
  const Json at4 = EffectiveParams(bench, 4);
  EXPECT_EQ(at4["n"], 200);
  EXPECT_EQ(at4["reps"], 30);
  const PlanStage& run = plan->stages[1];
  EXPECT_EQ(run.level, 2);
  EXPECT_EQ(run.params["command"], Json::array({"python3", "a b.py", "--out", "{out}"}));
  EXPECT_EQ(run.params["env"]["OMP_NUM_THREADS"], "1");
}

TEST(Plan, ErrorsNameTheFileLineAndKey) {
  auto bad = [](const std::string& text) {
    auto plan = ParsePlan(text, "p.yaml");
    EXPECT_FALSE(plan.ok());
    return plan.ok() ? std::string() : plan.status().message();
  };
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: bench\n    rpes: 3\n"),
            "p.yaml: line 4: stage 'bench': unknown key for a bench stage 'rpes' (did you mean "
            "'reps'?)");
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: bench\n    by_level:\n      2: {name: x}\n"),
            "p.yaml: line 5: stage 'bench': by_level 2: 'name' can't change by level");
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: env\n    level: 0\n"),
            "p.yaml: line 4: 'level' must be 1 to 4");
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: monitor\n  - kind: monitor\n    name: m2\n"),
            "p.yaml: line 4: a second monitor stage; a plan has at most one");
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: bench\n    full: yes\n"),
            "p.yaml: line 4: stage 'bench': 'full' must be true or false");
  EXPECT_EQ(bad("plan: t\nstages:\n  - kind: exec\n    command: \"a 'b\"\n"),
            "p.yaml: line 4: stage 'exec': 'command': the command has an unterminated ' (opened at "
            "byte 3)");
  EXPECT_NE(bad("plan: t\nstages:\n  - kind: bench\n    by_level:\n      2: {n: 0}\n")
                .find("stage 'bench' at level 2: 'n' must be at least 1"),
            std::string::npos);
  EXPECT_EQ(bad("plan: t\nplan: u\nstages: []\n"), "p.yaml: line 2: 'plan' given twice");
  EXPECT_EQ(bad("plan: 'a b'\nstages:\n  - kind: env\n"),
            "p.yaml: line 1: plan name 'a b' must be letters, digits, '.', '_' or '-'");
  EXPECT_EQ(bad("plan: t\nversion: 2\nstages:\n  - kind: env\n"),
            "p.yaml: line 2: 'version' must be 1, the only plan format there is");
}

TEST(MetricExtract, KeysAndPointers) {
  const Json doc = Json::parse(R"({"eval":{"auc":0.75,"runs":[{"loss":"0.5"},{"loss":2}]},
                                   "name":"x","a.b":3})");
  EXPECT_EQ(*ValueAtKey(doc, "eval.auc"), 0.75);
  EXPECT_EQ(*ValueAtKey(doc, "eval.runs.1.loss"), 2.0);
  EXPECT_EQ(*ValueAtKey(doc, "eval.runs.0.loss"), 0.5);  // a number written as a string
  EXPECT_EQ(*ValueAtKey(doc, "/eval/runs/1/loss"), 2.0);
  EXPECT_EQ(*ValueAtKey(doc, "/a.b"), 3.0);
  EXPECT_FALSE(ValueAtKey(doc, "eval.runs.2.loss").ok());
  EXPECT_FALSE(ValueAtKey(doc, "eval.missing").ok());
  EXPECT_FALSE(ValueAtKey(doc, "name").ok());
  EXPECT_FALSE(ValueAtKey(doc, "eval").ok());
  EXPECT_FALSE(ValueAtKey(doc, "/nope").ok());
}

TEST(MetricExtract, RegexLastMatchFirstGroup) {
  const std::string log = "step 1 loss=0.9\nstep 2 loss=0.5 (best)\nstep 3 loss=nan\n";
  EXPECT_EQ(*ValueByRegex(log, "loss=([0-9.]+)"), 0.5);
  EXPECT_EQ(*ValueByRegex("throughput 12.5e3\n", "[0-9.]+e[0-9]+"), 12500.0);
  EXPECT_FALSE(ValueByRegex(log, "loss=(nan)").ok());  // not a finite number
  EXPECT_FALSE(ValueByRegex(log, "auc=([0-9.]+)").ok());
  EXPECT_FALSE(ValueByRegex(log, "(").ok());
  EXPECT_TRUE(CheckMetricSpec(Json::parse(R"j({"name":"a","regex":"x=(\\d+)"})j")).ok());
  EXPECT_FALSE(CheckMetricSpec(Json::parse(R"({"name":"a","json":"m.json"})")).ok());
  EXPECT_FALSE(CheckMetricSpec(Json::parse(R"({"name":"a","regex":"x","json":"m"})")).ok());
  EXPECT_FALSE(CheckMetricSpec(Json::parse(R"({"name":"a","regex":"x","better":"up"})")).ok());
}

}  // namespace
}  // namespace parity::collect
