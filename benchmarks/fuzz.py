"""Fuzz pga-dyn with mutated robot files and count the outcomes.

Run: python benchmarks/fuzz.py [--cases 5000] [--seed 0] [--limit 60] [--no-cli] [--show 5]

Each case is a valid URDF / URDF+ file (a random tree, or one of the project's own PKM and
linkage files) with up to three mutations (tests/fuzz_cases.py: deleted, duplicated and
swapped elements; NaN, inf, huge, negative and malformed numbers; non-PSD inertias; cycles;
unknown links; changed joint types; every joint passive; no joints; truncated or broken XML;
empty and binary files; gravity huge or not finite), loaded and run through drng.nullspace, pga_dyn.regressor,
sample_states, drng.numerical_nullspace, drng.rpna, drng.base_parameters, drng.classify and
``pga-dyn analyze --json``. Printed: the counts by outcome (answered, refused, escaped, over
budget, NaN), the refusals per step, the slowest case, and the first ``--show`` failures with
their files' descriptions. Expected: 0 escaped, 0 over budget, 0 NaN.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from fuzz_cases import SEPARATOR, random_case, run_case  # noqa: E402

OUTCOMES = ("answered", "refused", "escaped", "over budget", "nan")


def _summary(run) -> list:
    """One line per failed step: the step and the last line of its error."""
    lines = []
    for block in run["error"].split(SEPARATOR):
        text = [line for line in block.strip().splitlines() if line.strip()]
        if text:
            where = next((line.strip() for line in reversed(text) if line.strip().startswith('File "')), "")
            lines.append(f"{run['outcome']}: {text[0].split(':')[0]}: {text[-1][:150]} [{where[-90:]}]")
    return lines or [run["outcome"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case before it counts as over budget")
    parser.add_argument("--no-cli", action="store_true", help="skip pga-dyn analyze (faster)")
    parser.add_argument("--show", type=int, default=5, help="failures to print in full")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    def pick(options):
        return options[int(rng.integers(len(options)))]

    counts, steps, failures = Counter(), Counter(), []
    slowest = (0.0, "")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(args.cases):
            data, floating, gravity, what = random_case(pick)
            run = run_case(data, floating, gravity, directory, args.limit, cli=not args.no_cli)
            counts[run["outcome"]] += 1
            steps.update(f"{name} {outcome}" for name, outcome in run["steps"].items())
            if run["seconds"] > slowest[0]:
                slowest = (run["seconds"], f"case {k} ({what})")
            if run["outcome"] in ("escaped", "nan", "over budget"):
                failures.append((k, what, (floating, gravity), run, data))
            if (k + 1) % 500 == 0:
                print(f"  {k + 1} cases, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(
        f"{args.cases} cases (seed {args.seed}) in {time.perf_counter() - start:.0f} s; "
        f"slowest {slowest[0]:.1f} s: {slowest[1]}"
    )
    print("outcome: " + ", ".join(f"{name} {counts[name]}" for name in OUTCOMES))
    print("steps:   " + ", ".join(f"{key} {value}" for key, value in sorted(steps.items())))
    kinds = Counter(line for *_, run, _ in failures for line in _summary(run))
    for line, number in kinds.most_common():
        print(f"  {number:5d}  {line}")
    for k, what, floating, run, data in failures[: args.show]:
        print(f"\n--- case {k}: {run['outcome']} ({what}, floating, gravity={floating}, {run['seconds']:.1f} s)")
        print(run["error"][-3000:])
        print(data[:3000].decode("utf-8", "replace"))
    return 1 if any(counts[name] for name in ("escaped", "nan", "over budget")) else 0


if __name__ == "__main__":
    sys.exit(main())
