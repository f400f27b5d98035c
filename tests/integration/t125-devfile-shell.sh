#!/usr/bin/env bash
# t125: /dev/exitscope from a shell script. A shell's `echo LINE >
# /dev/exitscope` opens the file, dup2's it onto 1, closes the original and
# only then writes: the runtime must follow the file to its new number
# (dup2, dup3, dup, F_DUPFD) and forget a number that dup2 replaced or
# close_range closed. Both dash (sh) and bash, and a run-wide window closed
# the same way from a child of the run.
. "$(dirname "$0")/../lib.sh"
cd "$SCRATCH" || exit 1

# labels SHELL SCRIPT: run SCRIPT under SHELL, print the records' "reason:label" (one line)
labels() {
  local dir=$SCRATCH/$1.$2
  mkdir -p "$dir"
  "$XS" run -o "$dir" --format none -- "$1" -c "$3" >"$dir.out" 2>"$dir.err"
  jq -r '"\(.reason):\(.label // "-")"' "$dir"/exitscope-*.jsonl 2>/dev/null | tr '\n' ' '
}

for sh in sh bash; do
  expect_eq "$sh: echo 'dump LABEL' > /dev/exitscope closes a window with that label" \
    "app:from-$sh exit:- " "$(labels "$sh" echo "echo 'dump from-$sh' > /dev/exitscope")"
  expect_eq "$sh: the file under a copied number (exec 6>&5; exec 5>&-; echo >&6)" \
    "app:via-6 exit:- " "$(labels "$sh" copy 'exec 5>/dev/exitscope; exec 6>&5; exec 5>&-; echo "dump via-6" >&6')"
  # a number that was the file and was replaced by another file is that
  # file: the line goes into it and closes no window
  got=$(labels "$sh" replaced 'exec 5>/dev/exitscope; exec 5>replaced.txt; echo "dump no" >&5')
  expect_eq "$sh: a number dup2 replaced is not the file any more" "exit:- / dump no" \
    "$got/ $(cat replaced.txt 2>/dev/null)"
  rm -f replaced.txt
done

# a run-wide window from a child of a shell script, the same way
cat >job.sh <<'EOF'
(sleep 0.3) &
( echo "run-dump from-child" > /dev/exitscope )
wait
EOF
"$XS" run --format none -- sh ./job.sh >job.out 2>job.err
d=$(ls -d exitscope-* 2>/dev/null | head -n 1)
check "run-dump from a shell child: the run file's window line has its label" \
  grep -q '"event": "window", "run_window": 1, "label": "from-child", "reset": false, "reason": "app"' "${d:-none}/run.jsonl"
