# SPDX-License-Identifier: GPL-2.0
# reasons2c.awk: turns waitreasons.tsv into C initializers; any malformed row fails the build.
BEGIN {
	print "/* generated from golayout/waitreasons.tsv by golayout/reasons2c.awk: do not edit */"
	print "static const struct {"
	print "\tint major, minor;"
	print "\tconst char *reason;"
	print "} reasons[] = {"
	n = 0
	HEADER = "go\tindex\treason"
}
{
	# index 0 is "": its third column is empty, but there
	if (NF != 3)
		die("expected 3 columns, found " NF)
	if (split($1, v, ".") != 2 || v[1] !~ /^[0-9]+$/ || v[2] !~ /^[0-9]+$/)
		die("bad Go version " $1)
	if ($2 !~ /^[0-9]+$/)
		die("index is not a number: " $2)
	# golayout__wait_reasons relies on it: each release's indices 0, 1, 2... in order
	if ($2 != next_index[$1] + 0)
		die("Go " $1 ": index " $2 " out of order (expected " next_index[$1] + 0 ")")
	next_index[$1]++
	if ($3 !~ /^[ -~]*$/ || $3 ~ /["\\]/ || length($3) > 39)
		die("reason must be printable ASCII without quotes or backslashes, at most 39 bytes")
	printf "\t{ %d, %d, \"%s\" },\n", v[1], v[2], $3
	n++
}
END {
	if (failed)
		exit 1
	if (!n) {
		print "waitreasons.tsv: no rows" > "/dev/stderr"
		exit 1
	}
	print "};"
}
