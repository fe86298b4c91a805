# SPDX-License-Identifier: GPL-2.0
# modules2c.awk: turns modules.tsv into C initializers; any malformed row fails the build.
BEGIN {
	print "/* generated from golayout/modules.tsv by golayout/modules2c.awk: do not edit */"
	print "static const struct golayout_member members[] = {"
	n = 0
	HEADER = "module\tversion\tverified\ttoolchain\tmember\toffset"
}
{
	if (NF != 6)
		die("expected 6 columns, found " NF)
	if ($1 !~ /^[a-z0-9.\/_-]+$/ || $2 !~ /^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$/ || $5 !~ /^[A-Za-z0-9.]+$/)
		die("bad module, version or member")
	if ($3 != "here")
		die("verified must be 'here'")
	if ($6 !~ /^[0-9]+$/)
		die("offset is not a number: " $6)
	if (seen[$1 " " $2 " " $5]++)
		die("duplicate row for " $1 " " $2 " " $5)
	printf "\t{ \"%s\", \"%s\", \"%s\", \"%s\", %d },\n", $1, $2, $4, $5, $6
	n++
}
END {
	if (failed)
		exit 1
	if (!n)
		print "\t{ NULL, NULL, NULL, NULL, 0 },"
	print "};"
}
