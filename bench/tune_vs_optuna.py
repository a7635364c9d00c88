#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity tune against Optuna on the same space and the same trial runner, in one run (issue 50).

Optuna, given the budget T, runs a study with its TPE sampler and median pruner. Each trial
is the harness parity tune runs (`python -m parity_workloads.harness`, a fresh process),
first for the first rung's steps and reported as the intermediate value, then, if the
pruner lets it on, for the last rung's. Its value is samples/s. parity tune runs the same
space with budget 0.6·T. The time-to-target check of the issue: does the tuner reach at least
95% of Optuna's best speed-up within 0.6·T?

Both speed-ups are over the same default (every knob and variable at `default`), measured
once at the last rung's steps before either search. Optuna does not judge results, so its
best may change them (bf16, a larger batch); the table says whether parity tune flagged
that configuration (losses outside the default's seed envelope). Each round is one pair of
searches; the figures are the medians over the rounds.

    PYTHONPATH=python $(scripts/venv) bench/tune_vs_optuna.py --parity build/parity \\
        [--workload cnn] [--size small] [--budget 300] [--rounds 3] [--space FILE]
        [--min-steps 5] [--max-steps 45] [--warmup 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

DEFAULT_SPACE = """\
knobs:
  batch_size: [default, 64, 128]
  num_workers: [default, 1]
  threads: [default, 1]
  amp: [default, bf16]
  channels_last: [default, true]
"""
FLAGS = {"batch_size": "--batch-size", "num_workers": "--num-workers",
         "prefetch_factor": "--prefetch-factor", "threads": "--threads", "amp": "--amp",
         "compile": "--compile", "optimizer": "--optimizer", "sdpa_backend": "--sdpa-backend",
         "lr_rule": "--lr-rule"}
SWITCHES = {"pin_memory": "--pin-memory", "persistent_workers": "--persistent-workers",
            "channels_last": "--channels-last"}


def harness_rate(args, knobs, env, steps):
    """samples/s of one harness run (a fresh process), or None when it fails."""
    cmd = [sys.executable, "-m", "parity_workloads.harness", "--workload", args.workload,
           "--size", args.size, "--steps", str(steps), "--warmup", str(args.warmup),
           "--json", "-"]
    for key, value in knobs.items():
        if key in SWITCHES:
            if value is True:
                cmd.append(SWITCHES[key])
        else:
            cmd += [FLAGS[key], str(value)]
    run_env = dict(os.environ, **{k: str(v) for k, v in env.items()})
    r = subprocess.run(cmd, capture_output=True, text=True, env=run_env)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout).get("samples_per_s")


def optuna_search(args, space, budget, default_rate):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    knobs, env = space.get("knobs", {}) or {}, space.get("env", {}) or {}

    def objective(trial):
        chosen_knobs, chosen_env = {}, {}
        for name, values in knobs.items():
            v = trial.suggest_categorical(name, [str(x) for x in values])
            if v != "default":
                chosen_knobs[name] = {"True": True, "true": True}.get(v, v)
        for name, values in env.items():
            v = trial.suggest_categorical("env_" + name, [str(x) for x in values])
            if v != "default":
                chosen_env[name] = v
        # parity tune's label of the configuration (TuneConfig::Label), to look it up there
        label = " ".join(["%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v)
                          for k, v in sorted(chosen_knobs.items())] +
                         ["%s=%s" % kv for kv in sorted(chosen_env.items())]) or "default"
        trial.set_user_attr("label", label)
        first = harness_rate(args, chosen_knobs, chosen_env, args.min_steps)
        if first is None:
            raise optuna.TrialPruned()
        trial.report(first, 0)
        if trial.should_prune():
            raise optuna.TrialPruned()
        rate = harness_rate(args, chosen_knobs, chosen_env, args.max_steps)
        if rate is None:
            raise optuna.TrialPruned()
        trial.report(rate, 1)
        return rate

    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=args.seed),
                                pruner=optuna.pruners.MedianPruner(n_startup_trials=3))
    start = time.perf_counter()
    study.optimize(objective, timeout=budget)
    seconds = time.perf_counter() - start
    done = [t for t in study.trials if t.value is not None]
    if not done:
        return {"speedup": None, "label": "none", "trials": len(study.trials),
                "seconds": seconds}
    best = study.best_trial
    return {"speedup": best.value / default_rate, "label": best.user_attrs["label"],
            "trials": len(study.trials), "pruned": sum(
                1 for t in study.trials if t.state.name == "PRUNED"), "seconds": seconds}


def tune_search(args, space_path, budget, tmp):
    out = os.path.join(tmp, "tune.json")
    start = time.perf_counter()
    r = subprocess.run([args.parity, "tune", args.workload, "--space", space_path, "--size",
                        args.size, "--budget", str(int(budget)), "--min-steps",
                        str(args.min_steps), "--max-steps", str(args.max_steps), "--warmup",
                        str(args.warmup), "--json", out, "--quiet", "--python", sys.executable],
                       capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if not os.path.exists(out):  # refused (a budget below one trial of each, say)
        sys.exit("parity tune wrote no report (exit %d): %s" % (r.returncode,
                                                                 r.stderr.strip()[-500:]))
    with open(out) as f:
        doc = json.load(f)
    flagged = {t["label"] for t in doc["trials"]
               if t.get("loss_check") and not t["loss_check"]["inside_envelope"]}
    s = doc.get("speedup")
    return {"speedup": s["ratio"] if s else None, "low": s["low"] if s else None,
            "high": s["high"] if s else None,
            "label": doc["best"]["label"] if doc.get("best") else "none",
            "trials": len(doc["trials"]), "seconds": seconds, "flagged": flagged}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--workload", default="cnn")
    ap.add_argument("--size", default="small")
    ap.add_argument("--budget", type=float, default=300.0, help="Optuna's budget T, seconds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--space", help="a space file (default: a 48-configuration space)")
    ap.add_argument("--min-steps", type=int, default=5)
    ap.add_argument("--max-steps", type=int, default=45)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        space_path = args.space or os.path.join(tmp, "space.yaml")
        if not args.space:
            with open(space_path, "w") as f:
                f.write(DEFAULT_SPACE)
        with open(space_path) as f:
            space = yaml.safe_load(f)
        rows = []
        for round_ in range(args.rounds):
            default_rate = harness_rate(args, {}, {}, args.max_steps)
            if default_rate is None:
                sys.exit("tune_vs_optuna.py: the default configuration fails")
            optuna_row = optuna_search(args, space, args.budget, default_rate)
            tune_row = tune_search(args, space_path, 0.6 * args.budget, tmp)
            reached = (tune_row["speedup"] is not None and optuna_row["speedup"] is not None
                       and tune_row["speedup"] >= 0.95 * optuna_row["speedup"])
            rows.append((default_rate, tune_row, optuna_row, reached))
            print("round %d: default %.4g samples/s; parity tune %s (%s) in %.0f s; Optuna %s "
                  "(%s) in %.0f s" % (
                      round_ + 1, default_rate,
                      "%.3fx" % tune_row["speedup"] if tune_row["speedup"] else "-",
                      tune_row["label"], tune_row["seconds"],
                      "%.3fx" % optuna_row["speedup"] if optuna_row["speedup"] else "-",
                      optuna_row["label"], optuna_row["seconds"]), flush=True)
    median = lambda xs: statistics.median(xs) if xs else float("nan")
    print()
    print("parity tune (budget 0.6·T = %.0f s) against Optuna TPE + median pruner (T = %.0f s), "
          "%s at size %s, %d round(s), the same harness; load %.2f"
          % (0.6 * args.budget, args.budget, args.workload, args.size, args.rounds,
             os.getloadavg()[0]))
    print()
    print("| round | default samples/s | parity tune: best, x default [95%] | time (s) | trials "
          "| Optuna: best, x default | time (s) | trials (pruned) | Optuna's best flagged by "
          "tune | ≥ 95% of Optuna's |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for i, (d, t, o, reached) in enumerate(rows, 1):
        print("| %d | %.4g | %s %s | %.0f | %d | %s %s | %.0f | %d (%d) | %s | %s |" % (
            i, d, t["label"],
            "%.3f [%.3f, %.3f]" % (t["speedup"], t["low"], t["high"]) if t["speedup"] else "-",
            t["seconds"], t["trials"], o["label"],
            "%.3f" % o["speedup"] if o["speedup"] else "-", o["seconds"], o["trials"],
            o.get("pruned", 0), "yes" if o["label"] in t["flagged"] else "no",
            "yes" if reached else "no"))
    print()
    print("medians: parity tune %.3fx, Optuna %.3fx; the tuner reached 95%% of Optuna's best "
          "within 0.6·T in %d of %d rounds" % (
              median([t["speedup"] for _, t, _, _ in rows if t["speedup"]]),
              median([o["speedup"] for _, _, o, _ in rows if o["speedup"]]),
              sum(1 for *_, r in rows if r), len(rows)))


if __name__ == "__main__":
    main()
