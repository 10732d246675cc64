#!/bin/sh
# check_citations.sh: fail on citations that point outside the repository.
#
# The code and documentation cite docs/math.md by section number
# ("docs/math.md §4.5") and the papers by name (its legend lists them). This
# script lists, as file:line, every tracked *.go and *.md line that still uses
# an old form:
#
#   - "SPEC", "SPEC §N"             an external specification
#   - "seed 000" ... "seed 009"     the papers by their number in a file list
#   - "the seed's Table 1" etc.     a paper called "the seed"
#   - "[O]", "[P]", "[!]"           tags whose legend was outside the repository
#   - a "§" in a Go file that is not part of a "docs/NAME.md §N" citation
#
# docs/math.md's legend (between <!-- legend --> and <!-- /legend -->) may name
# the old forms and is skipped. Exit status: 0 if none is found, 1 otherwise.
#
# Usage: scripts/check_citations.sh   (from any directory of the repository)
set -eu
cd "$(dirname "$0")/.."

if git ls-files -z -- '*.go' '*.md' | xargs -0 perl -ne '
	BEGIN { $found = 0 }
	if ($ARGV ne $file) { $file = $ARGV; $legend = 0 }
	if ($file eq "docs/math.md") {
		if (/<!-- legend -->/) { $legend = 1 }
		if (/<!-- \/legend -->/) { $legend = 0; next }
		next if $legend;
	}
	my $bad = /\bSPEC\b/ || /\bseed 00\d\b/ || /\[[OP!]\]/
		|| /(?:\b|(?<=\\n))[Tt]he seed\x27s (?:settings|experiments?|Table|Appendix|recipe|line|MLP|data-free|bounded|parameterisation|"KL|E\b|FL-SOB|PFL|Newton|count|n\b|metric|TensorFlow|own)/
		|| /(?:\b|(?<=\\n))[Tt]he seed (?:is silent|never|prints|gave|says|learns|trains|leaves|lists|feeds|writes|gives|reports|samples)\b/
		|| /\((?:the seed: |the seed\))|\bas the seed\)/;
	if (!$bad && $file =~ /\.go$/ && /\xc2\xa7/) {
		(my $s = $_) =~ s/\w+\.md(?:\x27s)? \xc2\xa7[\d.]+(?:(?:, | and |\xe2\x80\x93)(?:\xc2\xa7)?[\d.]+)*//g;
		$s =~ s/RFC \d+ \xc2\xa7[\d.]+//g;
		$bad = $s =~ /\xc2\xa7/;
	}
	if ($bad) { chomp; print "$file:$.: $_\n"; $found = 1 }
	close ARGV if eof;
	END { exit $found }
'; then
	exit 0
fi
exit 1
