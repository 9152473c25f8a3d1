#!/bin/bash
# pt-smoke.sh — Intel PT capture checked on the real kernel (issue 34).
#
# Run as root on a machine with Intel PT (/sys/bus/event_source/devices/
# intel_pt).  It records a few incidents of a known workload with the built
# sysptd and prints one line per check, PASS, FAIL or SKIP, with its
# evidence; send the whole output with any PT bug report.  Exit status: 0
# every check passed or was skipped, 1 a check failed, 2 bad usage or the
# recording itself failed, 77 no Intel PT here (or not root): nothing checked.
#
#   scripts/pt-smoke.sh [--sysptd PATH] [--keep]
#
# Checks (each incident; SKIP with the reason where the incident does not
# hold what the check reads):
#   aux-pause    meta pt_aux_pause is "kernel" (the trigger paused PT in
#                the kernel); "user" is a FAIL on a 6.13+ kernel
#   ratios       meta pt_nom_freq (intel_pt/max_nonturbo_ratio) non-zero;
#                with CYC, pt_cyc_thresh set
#   clock        meta perf_clock_error_ns: the perf clock was measured at
#                this freeze within 100 us
#   modules      kernel-module code was decoded: slices whose symbol lies
#                in a module dso
#   window       no PT slice older than the window (meta window_start,
#                1 us of rounding allowed)
#   ftrace-sync  every perf SWITCH record (raw_switch) has an ftrace
#                sched_switch (sched_slice start) of the same task on the
#                same CPU; the median distance is within 20 us, the
#                largest within 200 us
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
sysptd=""
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--sysptd) sysptd=${2:-}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,30p' "$0"; exit 0 ;;
	*) echo "pt-smoke: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

pmu=/sys/bus/event_source/devices/intel_pt
if [ ! -d "$pmu" ]; then
	echo "pt-smoke: no $pmu: this CPU or VM has no Intel PT, nothing to check (exit 77)"
	exit 77
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "pt-smoke: system-wide Intel PT needs root: run it with sudo (exit 77)"
	exit 77
fi
if [ -z "$sysptd" ]; then
	for cand in "$here/build/sysptd" "$here/build-test/sysptd" "$here/build-release/sysptd"; do
		if [ -x "$cand" ]; then
			sysptd=$cand
			break
		fi
	done
fi
if [ -z "$sysptd" ] || [ ! -x "$sysptd" ]; then
	echo "pt-smoke: no built sysptd found: build it (scripts/build.sh) or pass --sysptd PATH" >&2
	exit 2
fi

fails=0
line() { # STATUS CHECK EVIDENCE
	printf '%-4s %-12s %s\n' "$1" "$2" "$3"
	if [ "$1" = FAIL ]; then
		fails=$((fails + 1))
	fi
}

q() { # INCIDENT SQL: one value (or lines), empty when it fails
	"$sysptd" query "$1" "$2" --format csv 2>/dev/null | tail -n +2 | tr -d '"'
}

meta() { # INCIDENT KEY
	q "$1" "SELECT value FROM meta WHERE key = '$2'"
}

tmp=$(mktemp -d /tmp/sptd-pt-smoke-XXXXXX)
work_pid=""
cleanup() {
	if [ -n "$work_pid" ]; then
		kill "$work_pid" 2>/dev/null
		wait "$work_pid" 2>/dev/null
	fi
	if [ "$keep" = 1 ]; then
		echo "pt-smoke: incidents kept in $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

echo "pt-smoke: $(uname -srm); sysptd $("$sysptd" --version 2>/dev/null | head -1)"
echo "pt-smoke: cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
for f in caps/psb_cyc caps/mtc caps/topa_multiple_entries caps/mtc_periods caps/cycle_thresholds \
         max_nonturbo_ratio tsc_art_ratio; do
	printf 'pt-smoke: %s = %s\n' "$f" "$(cat "$pmu/$f" 2>/dev/null || echo '(absent)')"
done

# The known workload: compression (user code, syscalls) and uname(2),
# whose syscall tracepoint is the trigger, so a perf-event trigger that
# can pause PT in the kernel fires a few times a second.
trigger="tracepoint=syscalls:sys_enter_newuname"
if [ ! -d /sys/kernel/tracing/events/syscalls/sys_enter_newuname ] &&
   [ ! -d /sys/kernel/debug/tracing/events/syscalls/sys_enter_newuname ]; then
	trigger="timer=300ms"
fi
(
	while :; do
		gzip -c "$sysptd" >/dev/null
		uname -a >/dev/null
		sleep 0.2
	done
) &
work_pid=$!

echo "pt-smoke: recording 3 incidents: --source pt --window 20ms --trigger $trigger"
if ! timeout 120 "$sysptd" record --source pt --window 20ms --trigger "$trigger" \
	--count 3 --cooldown 300ms --output "$tmp" >"$tmp/record.log" 2>&1; then
	echo "pt-smoke: sysptd record failed; its output:"
	sed 's/^/  /' "$tmp/record.log"
	exit 2
fi
kill "$work_pid" 2>/dev/null
wait "$work_pid" 2>/dev/null
work_pid=""

kver=$(uname -r | sed 's/[^0-9.].*//')
kmajor=${kver%%.*}
kminor=$(echo "$kver" | cut -d. -f2)
n=0
for inc in "$tmp"/*.db; do
	[ -e "$inc" ] || continue
	n=$((n + 1))
	name=$(basename "$inc")
	echo "pt-smoke: incident $n: $name"

	v=$(meta "$inc" pt_aux_pause)
	case $v in
	kernel) line PASS aux-pause "pt_aux_pause=kernel" ;;
	user)
		if [ "$kmajor" -gt 6 ] || { [ "$kmajor" -eq 6 ] && [ "$kminor" -ge 13 ]; }; then
			line FAIL aux-pause "pt_aux_pause=user on kernel $kver (6.13+ has AUX pause)"
		else
			line SKIP aux-pause "pt_aux_pause=user: kernel $kver is older than 6.13"
		fi ;;
	"") line SKIP aux-pause "no meta pt_aux_pause in this incident" ;;
	*) line FAIL aux-pause "pt_aux_pause=$v" ;;
	esac

	nom=$(meta "$inc" pt_nom_freq)
	cyc=$(meta "$inc" pt_cyc)
	thresh=$(meta "$inc" pt_cyc_thresh)
	if [ -z "$nom" ]; then
		line SKIP ratios "no meta pt_nom_freq"
	elif [ "$nom" -gt 0 ] && { [ "$cyc" != 1 ] || [ "${thresh:--1}" -ge 0 ]; }; then
		line PASS ratios "pt_nom_freq=$nom pt_cyc=${cyc:-?} pt_cyc_thresh=${thresh:-?}"
	else
		line FAIL ratios "pt_nom_freq=$nom pt_cyc=${cyc:-?} pt_cyc_thresh=${thresh:-?}"
	fi

	err=$(meta "$inc" perf_clock_error_ns)
	via=$(meta "$inc" perf_clock_via)
	if [ -z "$err" ]; then
		line SKIP clock "no meta perf_clock_error_ns"
	elif [ "$err" -ge 0 ] && [ "$err" -le 100000 ]; then
		line PASS clock "perf clock measured at the freeze via ${via:-?}, +- ${err} ns"
	else
		line FAIL clock "perf_clock_error_ns=$err via ${via:-?}"
	fi

	mods=$(q "$inc" "SELECT count(*) FROM dso WHERE path LIKE '%.ko' OR path LIKE '%.ko.%'
	              OR path LIKE '[module%' OR (path LIKE '[%]' AND path NOT LIKE '[kernel%'
	              AND path NOT LIKE '[vdso%' AND path NOT LIKE '[anon%')")
	modslices=$(q "$inc" "SELECT count(*) FROM slice JOIN symbol ON symbol.id = slice.symbol_id
	              JOIN dso ON dso.id = symbol.dso_id WHERE dso.path LIKE '%.ko'
	              OR dso.path LIKE '%.ko.%' OR dso.path LIKE '[module%'
	              OR (dso.path LIKE '[%]' AND dso.path NOT LIKE '[kernel%'
	              AND dso.path NOT LIKE '[vdso%' AND dso.path NOT LIKE '[anon%')")
	if [ -z "$mods" ] || [ "$mods" = 0 ]; then
		line SKIP modules "no kernel-module dso rows (module text not copied by this build?)"
	elif [ "${modslices:-0}" -gt 0 ]; then
		line PASS modules "$modslices slices in $mods module dsos"
	else
		line FAIL modules "$mods module dsos, no slice decoded in them"
	fi

	wstart=$(meta "$inc" window_start)
	first=$(q "$inc" "SELECT min(ts) FROM slice")
	if [ -z "$wstart" ] || [ -z "$first" ]; then
		line SKIP window "window_start='${wstart}' first slice='${first}' (nothing decoded?)"
	elif [ "$first" -ge $((wstart - 1000)) ]; then
		dropped=$(q "$inc" "SELECT coalesce(sum(value), 0) FROM stats WHERE name = 'slices_before_window'")
		line PASS window "first PT slice $(( (first - wstart) / 1000 )) us after window_start; ${dropped:-0} before it dropped (stat slices_before_window)"
	else
		line FAIL window "first PT slice $(( (wstart - first) / 1000 )) us before window_start"
	fi

	# nearest ftrace switch-in of the same task on the same CPU, per perf
	# SWITCH record, in ns; the records of tasks ftrace shows no slice of
	# (idle, the window's edges) are left out
	d=$(q "$inc" "SELECT d FROM (SELECT (SELECT min(abs(s.ts - r.ts)) FROM sched_slice s
	              JOIN thread t ON t.utid = s.utid WHERE s.cpu = r.cpu AND t.tid = r.next_tid
	              AND r.next_tid != 0 AND abs(s.ts - r.ts) < 10000000) AS d FROM raw_switch r)
	              WHERE d IS NOT NULL ORDER BY d")
	cnt=$(printf '%s\n' "$d" | grep -c '^[0-9]')
	if [ "$cnt" -eq 0 ]; then
		line SKIP ftrace-sync "no perf switch matched an ftrace one (raw_switch or sched_slice empty)"
	else
		med=$(printf '%s\n' "$d" | grep '^[0-9]' | sed -n "$(( (cnt + 1) / 2 ))p")
		max=$(printf '%s\n' "$d" | grep '^[0-9]' | tail -1)
		if [ "$med" -le 20000 ] && [ "$max" -le 200000 ]; then
			line PASS ftrace-sync "$cnt switches: median $med ns, max $max ns (bounds 20/200 us)"
		else
			line FAIL ftrace-sync "$cnt switches: median $med ns, max $max ns (bounds 20/200 us)"
		fi
	fi
done
if [ "$n" -eq 0 ]; then
	echo "pt-smoke: sysptd wrote no incident; its output:"
	sed 's/^/  /' "$tmp/record.log"
	exit 2
fi
echo "pt-smoke: $n incidents, $fails failed checks"
[ "$fails" -eq 0 ]
