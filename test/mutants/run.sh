#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Mutation check, by hand (not in CI). For each mutant (test/mutants/*.patch,
# or the ones named), apply it to a scratch copy of this tree, build, run the
# meson tests its "# catches:" line names, and print "caught" when they fail,
# "NOT caught" when they pass. See test/mutants/README.md.
#
# usage: test/mutants/run.sh [-n] [-l] [MUTANT ...]
#   MUTANT  a patch path or name (with or without .patch); default: all
#   -n      skip the baseline run (the named tests on the unpatched tree)
#   -l      list the mutants and what should catch them, then exit
# environment:
#   VSW_MUTANTS_DIR         scratch directory (default /tmp/vsw-mutants.NAME,
#                           NAME = this tree's directory name); kept between
#                           runs so builds are incremental
#   VSW_MUTANTS_MESON_ARGS  meson setup arguments, e.g. -Dvalidator=true
#                           (one scratch build directory per argument set)
#   VSW_MUTANTS_ONLY        run only these of each mutant's tests, e.g.
#                           "replay_virtq_dequeue replay_virtq_enqueue"
# A mutant's tests that this build lacks (replay_* need CC=clang and
# -Dfuzz=true) are left out; a mutant with none left is "skipped" (not a
# failure: run it again in a build that has them).
#
# The copy is HEAD plus the tree's uncommitted changes to tracked files
# (untracked files are not copied); the patches are read from the tree.
# Integration tests named by a mutant run under /tmp/vsw-integ.lock, one at
# a time. Exit status: 0 when every mutant was caught, else 1.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel) || exit 2
scratch=${VSW_MUTANTS_DIR:-/tmp/vsw-mutants.$(basename "$root")}
meson_args=${VSW_MUTANTS_MESON_ARGS:-}
src=$scratch/src
opts=$(printf "%s" "$meson_args" | md5sum | cut -c1-8)
build=$scratch/build-$opts
logs=$scratch/logs-$opts
lock=/tmp/vsw-integ.lock
baseline=1
list_only=0

while getopts nl opt; do
	case $opt in
	n) baseline=0 ;;
	l) list_only=1 ;;
	*) sed -n '9,13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

patches=()
if [ $# -eq 0 ]; then
	patches=("$here"/*.patch)
else
	for m in "$@"; do
		for p in "$m" "$here/$m" "$here/$m.patch"; do
			[ -f "$p" ] && break
		done
		[ -f "$p" ] || { echo "no such mutant: $m" >&2; exit 2; }
		patches+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")")
	done
fi

catches_of() {
	sed -n 's/^# catches:[[:space:]]*//p' "$1" | head -n 1
}

if [ $list_only -eq 1 ]; then
	for p in "${patches[@]}"; do
		printf '%-40s %s\n' "$(basename "$p" .patch)" "$(catches_of "$p")"
	done
	exit 0
fi

say() { printf '%s\n' "$*"; }

# The scratch copy: a clone sharing this repository's objects, at HEAD, with
# the uncommitted changes on top as one local commit ("baseline"). Checking
# out only rewrites files that differ, so the scratch build stays
# incremental.
prepare_tree() {
	local head
	mkdir -p "$scratch" "$logs"
	head=$(git -C "$root" rev-parse HEAD) || return 1
	if [ ! -d "$src/.git" ]; then
		git clone -q --shared --no-checkout "$root" "$src" || return 1
	fi
	git -C "$src" fetch -q "$root" "$head" || return 1
	git -C "$src" reset -q --hard && git -C "$src" clean -fdq
	git -C "$src" checkout -q --detach "$head" || return 1
	if ! git -C "$root" diff --quiet HEAD; then
		git -C "$root" diff --binary HEAD | git -C "$src" apply || return 1
		git -C "$src" -c user.name=mutants -c user.email=mutants@localhost \
			commit -qam "uncommitted changes of $root" || return 1
		say "# copy: $head + uncommitted changes"
	else
		say "# copy: $head"
	fi
	if [ ! -f "$build/build.ninja" ]; then
		rm -rf "$build"
		# shellcheck disable=SC2086
		meson setup "$build" "$src" $meson_args >"$logs/setup.log" 2>&1 ||
			{ say "meson setup failed: $logs/setup.log"; return 1; }
	fi
	say "# build: $build ${meson_args:-(default options)}"
}

restore_tree() {
	git -C "$src" reset -q --hard && git -C "$src" clean -fdq
}

# Known test names, and which of them are integration tests.
all_tests=
integ_tests=
load_tests() {
	all_tests=$(meson test -C "$build" --no-rebuild --list 2>/dev/null |
		sed -n 's/^[^ ]* \/ //p')
	integ_tests=$(meson test -C "$build" --no-rebuild --list \
		--suite integration 2>/dev/null | sed -n 's/^[^ ]* \/ //p')
}

is_test() { printf '%s\n' "$1" | grep -qxF -- "$2"; }

# Run the named tests; returns meson's status.
run_tests() {
	local t integ=0
	for t in "$@"; do
		is_test "$integ_tests" "$t" && integ=1
	done
	if [ $integ -eq 1 ]; then
		flock "$lock" meson test -C "$build" --no-rebuild \
			--print-errorlogs --num-processes 1 "$@"
	else
		meson test -C "$build" --no-rebuild --print-errorlogs "$@"
	fi
}

prepare_tree || exit 2
ninja -C "$build" >"$logs/build.log" 2>&1 ||
	{ say "the unpatched tree does not build: $logs/build.log"; exit 2; }
load_tests

if [ $baseline -eq 1 ]; then
	union=$(for p in "${patches[@]}"; do catches_of "$p"; done |
		tr ' ' '\n' | sed '/^$/d' | sort -u)
	known=()
	for t in $union; do
		is_test "$all_tests" "$t" && known+=("$t")
	done
	if [ ${#known[@]} -gt 0 ]; then
		if ! run_tests "${known[@]}" >"$logs/baseline.log" 2>&1; then
			say "baseline FAILED (unpatched tree): $logs/baseline.log"
			exit 2
		fi
		say "# baseline: ${known[*]} pass unpatched"
	fi
fi

n_caught=0
n_missed=0
n_broken=0
n_skipped=0
missed=()
for p in "${patches[@]}"; do
	name=$(basename "$p" .patch)
	log=$logs/$name.log
	tests=$(catches_of "$p")
	status=
	[ -n "$tests" ] || status="BROKEN (no '# catches:' line)"
	# run what this build has (replay_* need -Dfuzz=true, clang), and of
	# that only VSW_MUTANTS_ONLY's tests when set; BROKEN when none is left
	run=
	for t in $tests; do
		is_test "$all_tests" "$t" || continue
		[ -z "${VSW_MUTANTS_ONLY:-}" ] ||
			printf '%s\n' $VSW_MUTANTS_ONLY | grep -qxF -- "$t" ||
			continue
		run="$run${run:+ }$t"
	done
	[ -n "$status" ] || [ -n "$run" ] ||
		status="skipped (none of '$tests' in this build)"
	tests=$run
	start=$(date +%s)
	if [ -z "$status" ]; then
		if ! git -C "$src" apply "$p" >"$log" 2>&1; then
			status="BROKEN (does not apply)"
		elif ! ninja -C "$build" >>"$log" 2>&1; then
			status="BROKEN (does not build)"
		else
			# shellcheck disable=SC2086
			if run_tests $tests >>"$log" 2>&1; then
				status="NOT caught"
			else
				status=caught
			fi
		fi
	fi
	restore_tree
	case $status in
	caught) n_caught=$((n_caught + 1)) ;;
	skipped*) n_skipped=$((n_skipped + 1)) ;;
	"NOT caught") n_missed=$((n_missed + 1)); missed+=("$name") ;;
	*) n_broken=$((n_broken + 1)); missed+=("$name") ;;
	esac
	printf '%-36s %-12s by %s (%ss, %s)\n' "$name" "$status" "${tests:-?}" \
		$(($(date +%s) - start)) "$log"
done
say "mutants: ${#patches[@]}, caught $n_caught, NOT caught $n_missed," \
	"broken $n_broken${missed[*]:+ (${missed[*]})}, skipped $n_skipped"
[ $n_missed -eq 0 ] && [ $n_broken -eq 0 ]
