#!/usr/bin/env bash
# Judges selection by a cost model against selection by the nearest record, on the CPU,
# from corpora measured on a GPU: fits a model on the training corpora, replays every
# held-out corpus with it at each margin, and prints one table (issue 38's decision: may
# the model replace the transfer rules?).
#
# The corpora come from `PARTS=corpus bash bench/device_session.sh` (corpora.tar.gz), with
# training suites in CORPUS_SUITES beside the held-out ones, e.g.
# CORPUS_SUITES="h200_col2im narrow_channels heldout_fresh heldout_col2im ...":
#
#   tar xzf corpora.tar.gz && bash bench/choose_selection.sh corpora
#
# DIR holds <suite>.corpus.txtpb files. Held-out suites ($HELDOUT, default every held-out
# suite) are judged; every other corpus in DIR trains the model. $TREES (default 100)
# boosted trees; $FIT_FLAGS more flags for `autotune fit` (e.g. --rank: trees that order
# each problem's kernels); $MARGINS (default "0 5 10 20") percent; $AUTOTUNE the autotune binary
# (default the repository's bazel-bin/autotune/autotune, else its .device/bin/autotune, as
# bench/device_env.sh unpacks it).
# Writes the model and each replay under DIR/selection/.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:?usage: choose_selection.sh DIR (the folder of <suite>.corpus.txtpb files)}"
heldout="${HELDOUT-heldout heldout_fresh heldout_fresh2 heldout_col2im heldout_torch_layers}"
trees="${TREES:-100}"
margins="${MARGINS:-0 5 10 20}"
autotune="${AUTOTUNE:-}"
if [ -z "$autotune" ]; then
  for candidate in "$repo/bazel-bin/autotune/autotune" "$repo/.device/bin/autotune"; do
    [ -x "$candidate" ] && autotune="$candidate" && break
  done
fi
[ -x "${autotune:-}" ] || { echo "choose_selection.sh: no autotune binary; set AUTOTUNE" >&2; exit 2; }
out="$dir/selection"
mkdir -p "$out"

train=()
for corpus in "$dir"/*.corpus.txtpb; do
  [ -e "$corpus" ] || continue
  suite="$(basename "$corpus" .corpus.txtpb)"
  case " $heldout " in *" $suite "*) ;; *) train+=("$corpus") ;; esac
done
if [ "${#train[@]}" -eq 0 ]; then
  echo "choose_selection.sh: no training corpus in $dir (every corpus there is held out;" \
    "tune training suites with PARTS=corpus too, e.g. CORPUS_SUITES=\"h200_col2im ...\")" >&2
  exit 2
fi

echo "training corpora: ${train[*]}"
"$autotune" fit "${train[@]}" --trees="$trees" ${FIT_FLAGS:-} -o "$out/model.txtpb" | tee "$out/fit.txt" |
  sed -n '/leave one problem out/,$p'

# One row per held-out suite and margin: the replay's summary line.
rows=()
for suite in $heldout; do
  corpus="$dir/$suite.corpus.txtpb"
  if [ ! -e "$corpus" ]; then
    rows+=("| $suite | - | no corpus | | |")
    continue
  fi
  for margin in $margins; do
    log="$out/${suite}_margin${margin}.md"
    if ! "$autotune" replay "$corpus" --cost_model="$out/model.txtpb" --model_margin="$margin" \
        > "$log" 2>&1; then
      rows+=("| $suite | $margin% | replay failed: see $log | | |")
      continue
    fi
    summary="$(grep -m1 '^On the ' "$log" || true)"
    if [ -z "$summary" ]; then
      rows+=("| $suite | $margin% | no problem where the model chose | | |")
      continue
    fi
    # "On the N problem(s) where the model chose and both selections were measured: nearest
    # record X, cost model Y."
    problems="$(sed -n 's/^On the \([0-9]*\) problem.*/\1/p' <<< "$summary")"
    nearest="$(sed -n 's/.*nearest record \([0-9.]*\).*/\1/p' <<< "$summary")"
    model="$(sed -n 's/.*cost model \([0-9.]*\)\..*/\1/p' <<< "$summary")"
    rows+=("| $suite | $margin% | ${problems:--} | ${nearest:--} | ${model:--} |")
  done
done
echo
echo "| held-out suite | margin | problems where the model chose, both measured | nearest record | cost model |"
echo "| --- | ---: | ---: | ---: | ---: |"
[ "${#rows[@]}" -gt 0 ] && printf '%s\n' "${rows[@]}"
echo
echo "Ratios are geomeans of each selection's time over the per-problem tuning's winner;"
echo "per-problem tables in $out/. The model may replace the rules only where it is at least"
echo "as good as the nearest record on every suite at one margin."
