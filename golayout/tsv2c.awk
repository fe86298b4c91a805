# SPDX-License-Identifier: GPL-2.0
# tsv2c.awk: turns golayout.tsv into C initializers; any malformed row fails the build.
BEGIN {
	ncols = split("go verified toolchain labels g_m m_curg g_labels g_goid " \
		"hmap_count hmap_B hmap_buckets bucket_size bucket_tophash bucket_keys " \
		"bucket_values bucket_overflow label_list label_size label_key label_value " \
		"hmap_flags hmap_oldbuckets md_gofunc g_parentGoid headers Request_Header " \
		"hh_B hh_flags hh_buckets hh_oldbuckets hb_size hb_tophash hb_keys hb_values " \
		"hb_overflow sm_dir_ptr sm_dir_len st_groups st_mask sg_size sg_ctrl sg_slots " \
		"ss_size ss_key ss_elem g_atomicstatus g_waitreason g_sched gobuf_sp gobuf_pc " \
		"gobuf_bp g_syscallsp g_syscallpc gobuf_lr", cols, " ")
	nwall = 9
	print "/* generated from golayout/golayout.tsv by golayout/tsv2c.awk: do not edit */"
	print "static const struct golayout_row rows[] = {"
	n = 0
}
function num(v, name) {
	if (v == "-")
		return 0
	if (v !~ /^[0-9]+$/)
		die("column " name ": not a number: " v)
	return v
}
$1 == "go" {
	for (i = 1; i <= ncols; i++)
		if ($i != cols[i])
			die("header column " i " is " $i ", expected " cols[i])
	header = 1
	next
}
{
	if (!header)
		die("data before the header line")
	if (NF != ncols)
		die("expected " ncols " columns, found " NF)
	if (split($1, v, ".") != 2 || v[1] !~ /^[0-9]+$/ || v[2] !~ /^[0-9]+$/)
		die("bad Go version " $1)
	if (seen[$1]++)
		die("duplicate row for Go " $1)
	if ($2 != "here" && $2 != "reference")
		die("verified must be 'here' or 'reference'")
	if ($4 == "map")
		layout = "GO_LABELS_MAP"
	else if ($4 == "slice")
		layout = "GO_LABELS_SLICE"
	else
		die("labels must be 'map' or 'slice'")
	printf "\t{ %d, %d, %s, \"%s\", {\n", v[1], v[2], $2 == "here" ? "true" : "false", \
		$3 == "-" ? "" : $3
	printf "\t\t.labels_layout = %s, .g_m = %d, .m_curg = %d, .g_labels = %d, .g_goid = %d,\n", \
		layout, num($5, "g_m"), num($6, "m_curg"), num($7, "g_labels"), num($8, "g_goid")
	printf "\t\t.lmap = { .count = %d, .b = %d, .buckets = %d, .size = %d, .tophash = %d,\n", \
		num($9, "hmap_count"), num($10, "hmap_B"), num($11, "hmap_buckets"), \
		num($12, "bucket_size"), num($13, "bucket_tophash")
	printf "\t\t\t.keys = %d, .values = %d, .overflow = %d, .flags = %d, .oldbuckets = %d },\n", \
		num($14, "bucket_keys"), num($15, "bucket_values"), num($16, "bucket_overflow"), \
		num($21, "hmap_flags"), num($22, "hmap_oldbuckets")
	printf "\t\t.label_list = %d, .label_size = %d, .label_key = %d, .label_value = %d,\n", \
		num($17, "label_list"), num($18, "label_size"), num($19, "label_key"), num($20, "label_value")
	if ($25 == "hmap")
		hdr = "GO_MAP_HMAP"
	else if ($25 == "swiss")
		hdr = "GO_MAP_SWISS"
	else if ($25 == "-")
		hdr = "0"
	else
		die("headers must be 'hmap', 'swiss' or '-'")
	printf "\t\t.g_parent_goid = %d, .hdr = { .map = %s, .req_header = %d,\n", \
		num($24, "g_parentGoid"), hdr, num($26, "Request_Header")
	printf "\t\t\t.hmap = { .b = %d, .flags = %d, .buckets = %d, .oldbuckets = %d, .size = %d,\n", \
		num($27, "hh_B"), num($28, "hh_flags"), num($29, "hh_buckets"), num($30, "hh_oldbuckets"), \
		num($31, "hb_size")
	printf "\t\t\t\t.tophash = %d, .keys = %d, .values = %d, .overflow = %d },\n", \
		num($32, "hb_tophash"), num($33, "hb_keys"), num($34, "hb_values"), num($35, "hb_overflow")
	for (i = 36; i <= ncols - nwall; i++)
		printf "\t\t\t.%s = %d,\n", tolower(cols[i]), num($i, cols[i])
	printf "\t\t} },\n"
	printf "\t\t.md_gofunc = %d,\n", num($23, "md_gofunc")
	# runtime.g's scheduling members: all measured, or none ('-')
	dashes = 0
	for (i = ncols - nwall + 1; i <= ncols; i++)
		dashes += $i == "-"
	if (dashes && dashes != nwall)
		die("g_atomicstatus..gobuf_lr: all measured or all '-'")
	printf "\t\t.wall = { .known = %s", dashes ? "false" : "true"
	split("g_status g_waitreason g_sched gobuf_sp gobuf_pc gobuf_bp g_syscallsp g_syscallpc gobuf_lr", wf, " ")
	for (i = 1; i <= nwall; i++)
		printf ", .%s = %d", wf[i], num($(ncols - nwall + i), cols[ncols - nwall + i])
	printf " } },\n"
	n++
}
END {
	if (failed)
		exit 1
	if (!n) {
		print "golayout.tsv: no rows" > "/dev/stderr"
		exit 1
	}
	print "};"
}
