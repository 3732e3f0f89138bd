#!/usr/bin/env bash
# Judges selection by a cost model against selection by the nearest record, on the CPU,
# from corpora measured on a GPU (`PARTS=corpus bash bench/device_session.sh` returns them
# in corpora.tar.gz): fits a model on the training corpora, replays every held-out corpus
# with it at each margin, and prints one table (issue 38's decision: may the model replace
# the transfer rules?).
#
#   tar xzf corpora.tar.gz && bash bench/choose_selection.sh corpora
#
# DIR holds <suite>.corpus.txtpb files. Held-out suites ($HELDOUT, default the four
# held-out suites) are judged; every other corpus in DIR trains the model. $TREES (default
# 100) boosted trees; $MARGINS (default "0 5 10 20") percent; $AUTOTUNE the autotune binary
# (default bazel-bin/autotune/autotune, else .device/bin/autotune). Writes the model and
# each replay under DIR/selection/.
set -euo pipefail
dir="${1:?usage: choose_selection.sh DIR (the folder of <suite>.corpus.txtpb files)}"
heldout="${HELDOUT:-heldout heldout_fresh heldout_col2im heldout_torch_layers}"
trees="${TREES:-100}"
margins="${MARGINS:-0 5 10 20}"
autotune="${AUTOTUNE:-}"
if [ -z "$autotune" ]; then
  for candidate in bazel-bin/autotune/autotune .device/bin/autotune; do
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
[ "${#train[@]}" -gt 0 ] || { echo "choose_selection.sh: no training corpus in $dir" >&2; exit 2; }

echo "training corpora: ${train[*]}"
"$autotune" fit "${train[@]}" --trees="$trees" -o "$out/model.txtpb" | tee "$out/fit.txt" |
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
    "$autotune" replay "$corpus" --cost_model="$out/model.txtpb" --model_margin="$margin" > "$log"
    summary="$(grep -m1 '^On the ' "$log" || true)"
    # "On the N problem(s) where the model chose and both selections were measured: nearest
    # record X, cost model Y."
    problems="$(sed -n 's/^On the \([0-9]*\) problem.*/\1/p' <<< "$summary")"
    nearest="$(sed -n 's/.*nearest record \([0-9.]*\).*/\1/p' <<< "$summary")"
    model="$(sed -n 's/.*cost model \([0-9.]*\)\..*/\1/p' <<< "$summary")"
    rows+=("| $suite | $margin% | ${problems:-0} | ${nearest:--} | ${model:--} |")
  done
done
echo
echo "| held-out suite | margin | problems the model chose | nearest record | cost model |"
echo "| --- | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"
echo
echo "Ratios are geomeans of each selection's time over the per-problem tuning's winner;"
echo "per-problem tables in $out/. The model may replace the rules only where it is at least"
echo "as good as the nearest record on every suite at one margin."
