#!/usr/bin/env python3
"""Can a learned ranker pick among the library's choices better than the nearest record?

Reads the choices `autotune replay --choices_csv` writes: training corpora replayed with
--leave_out (each problem transferred from the others), held-out corpora replayed as they
are. Fits gradient-boosted trees (scikit-learn) to ln(time / the nearest pick's time) of each
measured choice, from what the library knows before measuring: the choice's order and level,
its record's distance and cost-model prediction next to the nearest pick's, and its vector
width, threads, tiles and shared memory over the nearest pick's. A problem then runs the
choice predicted fastest, where it is predicted at least MARGIN faster than the nearest pick.

Prints, for each margin, the training problems' geomean (library time over the tuning's
winner) under 5-fold cross-validation by problem, and each held-out corpus's, against the
nearest pick's. A choice the corpus did not time counts at the nearest pick's time.

  autotune replay train.corpus.txtpb --leave_out --choices_csv=train.csv   (each corpus)
  python3 bench/choice_ranker.py --train train*.csv --test heldout*.csv
"""
import argparse
import collections
import csv
import math

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import GroupKFold

OPERATORS = ["copy", "im2col", "col2im", "batch_copy"]
MISSING = 99.0  # a distance the heuristic has none of


def number(row, key):
    return float(row[key]) if row[key] else None


def read_problems(path):
    """[(nearest_us, winner_us, [(features, ln ratio or None, us or None)])] of one CSV."""
    by_problem = collections.OrderedDict()
    for row in csv.DictReader(open(path)):
        by_problem.setdefault(row["problem"], []).append(row)
    problems = []
    for rows in by_problem.values():
        nearest = rows[0]
        if not nearest["us"]:
            continue  # the nearest pick was not timed: nothing to compare against
        d0, p0 = number(nearest, "distance"), number(nearest, "predicted_us")
        predictions = [number(r, "predicted_us") for r in rows if r["predicted_us"]]
        fastest_prediction = min(predictions) if predictions else None
        seen, choices = {nearest["kernel"]}, []
        for row in rows[1:]:
            if row["kernel"] in seen:
                continue
            seen.add(row["kernel"])
            d, p = number(row, "distance"), number(row, "predicted_us")
            ratio = lambda key: max(1, int(row[key])) / max(1, int(nearest[key]))
            features = [
                int(row["order"]),
                row["level"] == "heuristic",
                d if d is not None else MISSING,
                d - d0 if d is not None and d0 else MISSING,
                d / d0 if d is not None and d0 else MISSING,
                math.log(p / p0) if p and p0 else 0.0,
                p is None or p0 is None,
                math.log(p / fastest_prediction) if p and fastest_prediction else 0.0,
                math.log2(ratio("vector_bytes")),
                math.log2(ratio("threads")),
                math.log(ratio("tiles")),
                math.log((int(row["shared_bytes"]) + 1) / (int(nearest["shared_bytes"]) + 1)),
                math.log(max(1, int(nearest["tiles"]))),
                math.log(float(nearest["us"])),
            ] + [row["op"] == op for op in OPERATORS]
            us = number(row, "us")
            choices.append((features, math.log(us / float(nearest["us"])) if us else None, us))
        problems.append((float(nearest["us"]), float(nearest["winner_us"]), choices))
    return problems


def fit(problems):
    x = [f for _, _, choices in problems for f, y, _ in choices if y is not None]
    y = [y for _, _, choices in problems for _, y, _ in choices if y is not None]
    model = GradientBoostingRegressor(n_estimators=150, max_depth=3, learning_rate=0.05,
                                      subsample=0.8, random_state=0)
    return model.fit(np.array(x, float), np.array(y))


def selected_ratios(model, problems, margin):
    ratios = []
    for nearest_us, winner_us, choices in problems:
        us = nearest_us
        if choices:
            predicted = model.predict(np.array([f for f, _, _ in choices], float))
            best = int(np.argmin(predicted))
            if predicted[best] < -margin and choices[best][2] is not None:
                us = choices[best][2]
        ratios.append(us / winner_us)
    return ratios


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", nargs="+", required=True, help="replay --leave_out CSVs")
    parser.add_argument("--test", nargs="+", default=[], help="held-out replay CSVs")
    parser.add_argument("--margins", nargs="+", type=float, default=[0, 0.05, 0.1, 0.2])
    args = parser.parse_args()
    train = [p for path in args.train for p in read_problems(path)]
    print(f"{len(train)} training problems, "
          f"{sum(1 for _, _, c in train for _, y, _ in c if y is not None)} measured choices")
    nearest = geomean([n / w for n, w, _ in train])
    folds = list(GroupKFold(n_splits=5).split(np.arange(len(train)), groups=np.arange(len(train))))
    models = [fit([train[i] for i in fitted]) for fitted, _ in folds]
    full = fit(train)
    print("| set | nearest | " + " | ".join(f"margin {m:g}" for m in args.margins) + " |")
    print("| --- | ---: |" + " ---: |" * len(args.margins))
    cells = []
    for margin in args.margins:
        ratios = [r for model, (_, held) in zip(models, folds)
                  for r in selected_ratios(model, [train[i] for i in held], margin)]
        cells.append(f"{geomean(ratios):.3f}")
    print(f"| training, 5-fold | {nearest:.3f} | " + " | ".join(cells) + " |")
    for path in args.test:
        problems = read_problems(path)
        cells = []
        for margin in args.margins:
            ratios = selected_ratios(full, problems, margin)
            cells.append(f"{geomean(ratios):.3f} (worst {max(ratios):.2f})")
        print(f"| {path} | {geomean([n / w for n, w, _ in problems]):.3f} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
