#!/usr/bin/env bash
# Runs the commands of README.md's "Your own data" section — the lines
# between the own-data markers, exactly as written — and checks what they
# write: the model file, the training report, the predictions (one row per
# test row, quantiles around the mean, the observed load mostly inside the
# 95 % interval) and the figures (PNG, 800 × 500). The build line runs in the
# repository root (bin/ is ignored by git), the others in a scratch directory
# holding a copy of examples/, so nothing is left in the checkout. Seconds.
#
#   bash scripts/own_data.sh        (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

sed -n '/<!-- own-data: begin -->/,/<!-- own-data: end -->/p' README.md | grep -v '^<!--' | grep -v '^```' >"$T/commands"
build=$(grep -c '^go build' "$T/commands" || true)
runs=$(grep -c '^pacpfl ' "$T/commands" || true)
if [ "$build" != 1 ] || [ "$runs" -lt 4 ] || [ "$((build + runs))" != "$(grep -c . "$T/commands")" ]; then
	echo "own_data: README.md's own-data block should hold one go build line and pacpfl commands only:" >&2
	cat "$T/commands" >&2
	exit 1
fi
mkdir -p "$T/work/examples"
cp examples/sites.csv "$T/work/examples/"
{
	echo 'set -euo pipefail'
	echo "cd '$ROOT'"
	grep '^go build' "$T/commands"
	echo "cd '$T/work'"
	grep '^pacpfl ' "$T/commands" | sed 's/$/ >>stdout.txt/'
} >"$T/run.sh"
echo "==> the README's own-data commands"
sed 's/^/    /' "$T/commands"
bash "$T/run.sh"

cd "$T/work"
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
grep -q '9 existing clients' stdout.txt || fail "train: no '9 existing clients' line"
grep -q 'model saved to sites.model' stdout.txt || fail "train: the model was not saved"
[ "$(stat -c %s sites.model)" -gt 10000 ] || fail "sites.model is $(stat -c %s sites.model) bytes"
grep -q '"lml_history": \[' sites-train.json || fail "sites-train.json has no lml_history"

# Predictions: the 70 test rows (7 per site), finite quantiles around the mean,
# errors of a few kW, most observed loads inside their 95 % interval.
[ "$(head -1 sites-predictions.csv)" = "line,site,observed,mean,std,q2.5,q97.5" ] ||
	fail "predictions header: $(head -1 sites-predictions.csv)"
awk -F, 'NR > 1 {
	n++
	if (!($6 < $4 && $4 < $7 && $5 > 0)) bad++
	e = $3 - $4; if (e < 0) e = -e; sum += e
	if ($6 <= $3 && $3 <= $7) inside++
	sites[$2] = 1
}
END {
	ns = 0; for (s in sites) ns++
	printf "predictions: %d rows of %d sites, mean absolute error %.2f kW, %d inside their 95%% interval\n", n, ns, sum / n, inside
	if (n != 70 || ns != 10) { print "want 70 rows of 10 sites"; exit 1 }
	if (bad > 0) { print bad " rows without q2.5 < mean < q97.5 and std > 0"; exit 1 }
	if (sum / n > 4) { print "the mean absolute error is larger than 4 kW"; exit 1 }
	if (inside < 0.8 * n) { print "fewer than 80% of the observed loads inside the 95% interval"; exit 1 }
}' sites-predictions.csv || fail "predictions are not sane"

# Figures: PNG signature, 800 × 500 from the IHDR chunk, not nearly empty.
for f in site03.png site10.png sites-training.png; do
	[ -f "$f" ] || {
		fail "$f missing"
		continue
	}
	sig=$(od -An -tx1 -N8 "$f" | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || fail "$f is not a PNG ($sig)"
	read -r w0 w1 w2 w3 h0 h1 h2 h3 < <(od -An -tu1 -j16 -N8 "$f")
	w=$((w0 << 24 | w1 << 16 | w2 << 8 | w3)) h=$((h0 << 24 | h1 << 16 | h2 << 8 | h3))
	[ "$w" = 800 ] && [ "$h" = 500 ] || fail "$f is ${w}×${h}, want 800×500"
	[ "$(stat -c %s "$f")" -gt 10000 ] || fail "$f is only $(stat -c %s "$f") bytes"
done
grep -q 'client site10: predictive with 23 training and 7 test points' stdout.txt ||
	fail "plot predictive site10: $(grep site10 stdout.txt)"

if [ "$fails" -gt 0 ]; then
	echo "own_data: $fails check(s) failed; the commands printed:" >&2
	cat stdout.txt >&2
	exit 1
fi
echo "own_data: the README's commands ran and wrote sane outputs"
