#!/usr/bin/env bash
# Drives the pacpfl binary through a table of bad invocations (issue 21) and
# checks, for each, the exit status (2: bad command line or environment,
# 1: the command ran and failed), that a usage error is short and printed on
# stderr only, and that no output file is left behind or corrupted: the
# existing report keep.json is unchanged and the directory holds no new or
# temporary file. A few good invocations check what the output writer must
# do (symlinks, devices, stdout, Ctrl-C). Runs in a few seconds.
#
#   bash scripts/cli_bad_invocations.sh        (from the repository root)
set -u
GO=${GO:-go}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
BIN=$T/bin/pacpfl
mkdir -p "$T/bin" "$T/out"
$GO build -o "$BIN" ./cmd/pacpfl || exit 1

O=$T/out # the directory every case writes into
printf '{"old": "report"}\n' >"$O/keep.json"
cp "$O/keep.json" "$T/keep.orig"
printf 'x,y\n0,-1e153\n0.2,1e153\n0.4,-1e153\n0.6,1e153\n0.8,-1e153\n' >"$O/huge.csv"
printf 'x,y\n1_000,2\n3,4\n' >"$O/literal.csv"
printf 'x,y\n0,1\n0.5,2\n1,1.5\n' >"$O/small.csv"
baseline=$(ls -A "$O")
fails=0 cases=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# check STATUS ARGS...: run pacpfl ARGS, want exit STATUS, no change in $O.
check() {
	local want=$1
	shift
	cases=$((cases + 1))
	"$BIN" "$@" >"$T/stdout" 2>"$T/stderr" </dev/null
	local got=$?
	local what="pacpfl $*"
	[ "$got" = "$want" ] || fail "$what: exit $got, want $want; stderr: $(head -c 300 "$T/stderr")"
	if [ "$want" = 2 ]; then
		[ -s "$T/stderr" ] || fail "$what: no message on stderr"
		[ ! -s "$T/stdout" ] || fail "$what: a usage error wrote to stdout"
		[ "$(wc -l <"$T/stderr")" -le 3 ] || fail "$what: $(wc -l <"$T/stderr") lines of stderr (the error scrolls away)"
	fi
	grep -q 'panic\|goroutine [0-9]' "$T/stderr" && fail "$what: panicked"
	cmp -s "$O/keep.json" "$T/keep.orig" || fail "$what: keep.json was changed"
	[ "$(ls -A "$O")" = "$baseline" ] || fail "$what: files left behind: $(ls -A "$O" | tr '\n' ' ')"
}

tiny=(--clients 4 --new-clients 1 -T 1 --k 1 --quiet)

# Bad values and combinations, each refused before any work (item 5, 10, 12).
check 2 train --k 0 --json "$O/keep.json"
check 2 train --lr NaN --json "$O/new.json"
check 2 train "${tiny[@]}" -c -1
check 2 train "${tiny[@]}" --extra -1
check 2 train "${tiny[@]}" --clients-per-round 5 --c 7
check 2 train "${tiny[@]}" --optimizer ""
check 2 train "${tiny[@]}" --batch 1000
check 2 train "${tiny[@]}" --dp-clip NaN
check 2 train "${tiny[@]}" --no-such-flag
check 2 train "${tiny[@]}" stray-argument
check 2 train "${tiny[@]}" --loss-range=-1e300,1e300 --json "$O/keep.json" # item 3
check 2 train --k 100000000 --json "$O/keep.json"                           # item 4
check 2 experiment --seeds 1 polynomial
check 2 experiment polynomial "${tiny[@]}" --methods vanilla,pooled,pacpfl --lr NaN --json "$O/keep.json"
check 2 experiment polynomial "${tiny[@]}" --methods vanilla --k 0
check 2 experiment polynomial "${tiny[@]}" --seed 99
check 2 experiment polynomial --seed-base 18446744073709551615 --seeds 2
check 2 tune polynomial --tau 0.3
check 2 bench gemm --backends native,native --n 8
check 2 bench lml --threads 100000 --m 8 --k 1
check 2 frobnicate

# Unwritable --json: exit 2 before any work, naming the path, not a temp file (items 1, 6).
check 2 train "${tiny[@]}" --json "$O/missing/dir.json"
grep -q '\.tmp' "$T/stderr" && fail "the message shows an internal temporary name"
check 2 train "${tiny[@]}" --json "$O"

# Results that are not numbers are errors (item 2), CSV is CSV (item 13).
check 1 gp eval --data "$O/huge.csv" --init-seed 1
grep -q standardise "$T/stderr" || fail "gp eval on 1e153 targets does not suggest standardising"
check 1 gp eval --data "$O/huge.csv" --init-seed 1 --json
check 1 gp eval --data "$O/literal.csv" --init-seed 1

# GP inference (issue 34): a bad mode, M < 0 and M above the rows, on every
# command that trains or evaluates a GP; predict's M above a client's rows
# with the committed model file (modelfile/testdata).
check 2 train "${tiny[@]}" --gp-inference fast
check 2 train "${tiny[@]}" --inducing -1
check 2 train "${tiny[@]}" --gp-inference sparse --inducing 500 # found when the clients are made
check 2 experiment polynomial "${tiny[@]}" --seeds 1 --gp-inference sparse --inducing 500
check 2 experiment polynomial "${tiny[@]}" --seeds 1 --gp-inference exactly
check 2 gp eval --data "$O/small.csv" --init-seed 1 --gp-inference fast
check 2 gp eval --data "$O/small.csv" --init-seed 1 --gp-inference sparse --inducing -1
check 2 gp eval --data "$O/small.csv" --init-seed 1 --gp-inference sparse --inducing 4 --json
check 2 bench lml --gp-inference auto
check 2 bench lml --gp-inference sparse --m 100 --inducing 256
check 2 predict --model "$O/keep.json" --data "$O/small.csv" --gp-inference fast
check 2 predict --model "$O/keep.json" --data "$O/small.csv" --inducing -1
check 2 predict --model modelfile/testdata/v1_gp_sites.model --data examples/sites.csv --context-column split --gp-inference sparse --inducing 50 --out "$O/pred.csv"
grep -q 'conditioned on only' "$T/stderr" || fail "predict --inducing above the rows does not say why"
check 2 plot predictive --model "$O/keep.json" --data "$O/small.csv" --client a --gp-inference fast --out "$O/fig.png"

# Figures (issue 17): a bad --out is a usage error before anything is read;
# a report or model that is not one is exit 1; no file is left behind.
# The federation's limits and update filters, refused before listening.
check 2 server --listen 127.0.0.1:1 --insecure "${tiny[@]}" --aggregator krum --byzantine 1 --json "$O/new.json"
check 2 server --listen 127.0.0.1:1 --insecure "${tiny[@]}" --aggregator trimmed-mean --trim 0.6
check 2 server --listen 127.0.0.1:1 --insecure "${tiny[@]}" --max-update-norm NaN
check 2 server --listen 127.0.0.1:1 --insecure "${tiny[@]}" --max-unregistered 0
check 2 server --listen 127.0.0.1:1 --insecure "${tiny[@]}" --round-timeout -1s
check 2 client --server 127.0.0.1:1 --insecure --client 0 --max-classes 1
check 2 plot
check 2 plot histogram --json "$O/keep.json" --out "$O/fig.png"
check 2 plot training --json "$O/keep.json" --out "$O/keep.json"
check 2 plot training --json "$O/keep.json" --out "$O/fig.jpg"
check 2 plot experiment --json "$O/keep.json" --out "$O/missing/fig.png"
check 2 plot predictive --model "$O/keep.json" --data "$O/huge.csv" --out "$O/fig.png"
check 1 plot training --json "$O/keep.json" --out "$O/fig.png"
check 1 plot experiment --json "$O/keep.json" --out "$O/fig.svg"
check 1 plot experiment --json "$O/no-such.json" --out "$O/fig.svg"
check 2 plot sweep --json "$O/keep.json" --out "$O/fig.jpg"
check 2 plot sweep --json "$O/keep.json" --metric nll --out "$O/fig.png"
check 1 plot sweep --json "$O/keep.json" --out "$O/fig.png"
check 1 plot predictive --model "$O/keep.json" --data "$O/huge.csv" --client a --out "$O/fig.png"

# Help: exit 0 on stdout (item 11).
for h in "help help" "help -h" "help experiment" "train -h" "gp -h" "bench gemm -h"; do
	# shellcheck disable=SC2086
	check 0 $h
	grep -q 'usage: pacpfl' "$T/stdout" || fail "pacpfl $h: no usage on stdout"
done

# A full disk is exit 1, whether stdout or --json (item 6).
if [ -c /dev/full ]; then
	cases=$((cases + 1))
	"$BIN" version >/dev/full 2>"$T/stderr"
	[ $? = 1 ] || fail "pacpfl version >/dev/full: exit status not 1"
	check 1 train "${tiny[@]}" --json /dev/full
	[ -c /dev/full ] || fail "/dev/full is no longer a device"
fi

# The output writer (item 1): a symlink is followed and stays a link; --json
# - is pure JSON on stdout; a pipe is written through.
ln -s keep.json "$O/link.json"
cases=$((cases + 1))
"$BIN" train "${tiny[@]}" --json "$O/link.json" >/dev/null 2>"$T/stderr" || fail "train --json link: $(cat "$T/stderr")"
[ -L "$O/link.json" ] || fail "--json replaced the symlink by a file"
grep -q '"dataset": "polynomial"' "$O/keep.json" || fail "--json did not reach the symlink's target"
rm "$O/link.json"
cp "$T/keep.orig" "$O/keep.json"
cases=$((cases + 1))
"$BIN" train "${tiny[@]}" --json - 2>/dev/null | head -c 1 | grep -q '{' || fail "--json - is not JSON on stdout"
cases=$((cases + 1))
"$BIN" train "${tiny[@]}" --json /dev/stdout 2>/dev/null | grep -q '"dataset"' || fail "--json /dev/stdout into a pipe failed"
[ "$(ls -A "$O")" = "$baseline" ] || fail "files left behind: $(ls -A "$O" | tr '\n' ' ')"

# Ctrl-C stops a run promptly, with status 130, and leaves no file.
# (Job control on: a background job of a script otherwise ignores SIGINT.
# And a script that is itself a background job — CI started with `&` —
# passes an ignored SIGINT down to every child, which job control cannot
# undo and Go keeps ignoring, as it should; env --default-signal restores
# the default disposition for the child where coreutils has it.)
dflt=()
if env --default-signal=INT true 2>/dev/null; then dflt=(env --default-signal=INT); fi
bin=$(readlink -f "$BIN")
interrupt() {
	cases=$((cases + 1))
	set -m
	"${dflt[@]}" "$BIN" "$@" --quiet --json "$O/interrupted.json" >/dev/null 2>"$T/stderr" &
	pid=$!
	set +m
	# Signal the program, not env or the forked shell before it: a SIGINT
	# that lands before env has restored its disposition is ignored and
	# lost. Then let it run into its training loop.
	for _ in $(seq 100); do [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$bin" ] && break; sleep 0.1; done
	sleep 1
	sigstate=$(grep -E '^(State|SigBlk|SigIgn|SigCgt):' "/proc/$pid/status" 2>/dev/null | tr '\n\t' '  ')
	kill -INT "$pid" 2>/dev/null
	# A watchdog instead of polling /proc: wait returns the moment the
	# program ends, and the watchdog's SIGKILL bounds one that does not.
	t0=$(date +%s%N)
	(
		trap 'kill "$s"; exit' TERM
		sleep 20 &
		s=$!
		wait "$s"
		kill -KILL "$pid"
	) >/dev/null 2>&1 &
	dog=$!
	wait "$pid" 2>/dev/null
	st=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	if [ "$st" != 130 ] || [ "$ms" -gt 5000 ]; then
		fail "$1 did not stop with status 130 within 5 s of SIGINT (stopped after $ms ms, status $st; before the signal: $sigstate; stderr: $(tail -c 300 "$T/stderr"))"
	elif ! grep -q "interrupted" "$T/stderr"; then
		fail "$1 stopped by SIGINT does not say so: $(tail -c 300 "$T/stderr")"
	fi
	[ "$(ls -A "$O")" = "$baseline" ] || fail "an interrupted $1 left files: $(ls -A "$O" | tr '\n' ' ')"
}
interrupt train --k 8 -T 100000
interrupt experiment polynomial --seeds 2 -T 100000 --methods pacpfl

if [ "$fails" -gt 0 ]; then
	echo "cli_bad_invocations: $fails of $cases checks failed" >&2
	exit 1
fi
echo "cli_bad_invocations: $cases invocations behaved"
