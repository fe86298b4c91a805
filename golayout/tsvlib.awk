# SPDX-License-Identifier: GPL-2.0
# tsvlib.awk: what the golayout table compilers share: tab-separated rows, comments and blank lines skipped, die().
# Given first: awk -f golayout/tsvlib.awk -f golayout/X2c.awk FILE.
BEGIN {
	FS = "\t"
}
function die(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}
/^#/ || /^[ \t]*$/ { next }
# the first row that is no comment is the header, when the script names it in HEADER
HEADER != "" && !header {
	if ($0 != HEADER)
		die("the header must be: " HEADER)
	header = 1
	next
}
