#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Test wrapper of the meson test setups (test/meson.build): runs the test
# with its stdout through a filter that makes cmocka's TAP readable by
# meson (1.0, Debian 12):
#  - cmocka 1.1.5 writes a skip as "not ok N # SKIP name", which meson
#    counts as a failure (cmocka >= 1.1.6 writes "ok N # SKIP name"): it
#    becomes "ok N - name # SKIP", which also keeps the name;
#  - a binary running several cmocka groups prints one plan per group,
#    which meson refuses: the cases are renumbered and one plan, the sum,
#    comes last (a crash mid-group then shows as too few tests run).
# Output without a TAP plan passes unchanged; exec keeps the test's own
# exit status and signals.
exec "$@" > >(exec awk '
/^1\.\.[0-9]+/ { plan += substr($1, 4); tap = 1; next }
tap && /^(not )?ok [0-9]+/ {
	n++
	sub(/ok [0-9]+/, "ok " n)
	if (match($0, /^(not )?ok [0-9]+ # SKIP ?/))
		$0 = "ok " n " - " substr($0, RLENGTH + 1) " # SKIP"
}
{ print; fflush() }
END { if (tap) print "1.." plan }')
