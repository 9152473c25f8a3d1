#!/bin/sh
# test_witness.sh — the witness suite (issue 27): sysptd and perf record
# the same moment of a workload of known behaviour (sptd-witness: short-
# lived processes, a thread pool, a sleeper, a pipe ping-pong, a timer,
# disk writes with fdatasync, threads that exit early), and what sysptd's
# incident says is held against what the second witness says.  Every
# comparison, its tolerance and why that tolerance are in docs/WITNESS.md;
# the figures of each run are printed.
#
#   samples   perf record -a -g -k mono -F 4000 -e cpu-clock: per group of
#             tasks (the short-lived processes; the pool threads), of the
#             user-mode samples, the share whose leaf is the group's hot
#             function, and the share with no function at all (no floor);
#             the two may differ by at most 4 standard errors of a
#             difference of two binomial proportions (pooled), and by at
#             most 0.10 absolute; kernel, vDSO and PLT-stub leaves are left
#             out on both sides (docs/WITNESS.md says why)
#   wakeups   perf sched record -k mono: each wakeup of wit_ping and
#             wit_pong (perf's sched_waking while the task was blocked,
#             paired with its next switch in: tests/lib/perf_wakes.sh),
#             inside the window and not cut by its edges: one wakeup on
#             both sides has the same waker and one end within 2 us (or
#             both within 1 ms): at most 0.5 % of perf's unmatched, 1 % of
#             sysptd's (perf drops a few events ftrace keeps); of the
#             matched, both ends within 2 us (ftrace and perf read the
#             clock separately for one event), except one end off for at
#             most 5 % (the host stopping the vCPU between the two reads)
#             and both ends off for at most 0.5 %; sum within 2 us a wakeup
#             plus those; max within 2 us or 0.1 %, or each side's worst a
#             wakeup the other holds with one end agreeing (such a stop)
#   irq wakes a bare ftrace instance's sched_waking records (their context
#             flags): wit_sleeper's and wit_timer's wakeups come from hrtimers
#             in hard irq context; sysptd's rows for them must say so (flags
#             32) within max(2, 2 %), and name a task as waker no more often
#             than the bare instance saw a task wake them
#   tasks     the program's own log (getpid, gettid): every logged thread
#             the incident holds belongs to the logged process, with the
#             logged name; every short-lived process is a process of its own
#   irqs      an ftrace instance of the test's own (irq_handler_entry and
#             _exit, removed on exit): per handler (number and name), the
#             handlers entered and exited inside the window, 1 ms from
#             either edge, number exactly sysptd's irq_slice rows there
#             with both ends seen; per IRQ number the incident holds at
#             most what /proc/interrupts counted over the whole run; the
#             disk IRQ fired
#
# Needs root, tracefs and perf (linux-perf); skips (77) otherwise.  Its own
# recorder name (--name), so it runs beside a default service.
set -u
BIN=${SPTD_BIN:?SPTD_BIN must name the built sysptd}
PROG=${SPTD_WITNESS_PROG:?SPTD_WITNESS_PROG must name the built sptd-witness}
RUN_MS=3500
WINDOW=2s
FREQ=4000
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (sysptd and perf record -a)" >&2; exit 77; }
command -v perf >/dev/null || { echo "SKIP: no perf (scripts/install-deps.sh installs linux-perf)" >&2; exit 77; }
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	{ echo "SKIP: no tracefs" >&2; exit 77; }

# /var/tmp: a disk, so that fdatasync makes disk interrupts
work=$(mktemp -d /var/tmp/sptd-witness-XXXXXX)
chmod 700 "$work"
pids=""
cleanup() {
	for p in $pids; do kill -INT "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${bare:-}" ] && rmdir "$bare" 2>/dev/null
	[ -n "${irqi:-}" ] && rmdir "$irqi" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=../lib/expect.sh
. "$(dirname "$0")/../lib/expect.sh"
# shellcheck source=../lib/perf_wakes.sh
. "$(dirname "$0")/../lib/perf_wakes.sh"
check_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', want '$2'"; fi; }

# ---- record the same moment ---------------------------------------------------
# -m 8192 each (32 MiB a CPU): perf's readers run as any task does;
# starved on a loaded machine (load 20 on 2 CPUs) with perf's own buffers
# they lost the events of whole seconds: perf sched then paired wakings with
# later switches in, and the IRQ counts fell short (4 of 15 of one IRQ).
# -B -N: no build-id pass over the whole file at perf's exit, which took
# minutes under load (the files are read where they are, by path)
perf record -B -N -m 8192 -a -g -k mono -F "$FREQ" -e cpu-clock -o "$work/samples.data" \
	>"$work/perf1.log" 2>&1 &
pids="$pids $!"
perf sched record -B -N -m 8192 -k mono -o "$work/sched.data" >"$work/perf2.log" 2>&1 &
pids="$pids $!"
# a bare ftrace instance of our own: sched_waking with each record's
# context flags as the kernel prints them (h hard irq, s softirq)
bare=/sys/kernel/tracing/instances/witbare$$
mkdir "$bare" && echo mono >"$bare/trace_clock" && echo 65536 >"$bare/buffer_size_kb" &&
	echo 1 >"$bare/events/sched/sched_waking/enable" ||
	{ echo "SKIP: cannot make ftrace instance $bare" >&2; exit 77; }
# and one for hard irq handlers (entry and exit), the exact witness of
# IRQ counts: an instance records every event of its CPU while its ring
# holds them (perf on this kernel drops tracepoint events ftrace keeps:
# seen virtio3-tx perf 2, sysptd 5).  It says when its ring overflowed
irqi=/sys/kernel/tracing/instances/witirq$$
mkdir "$irqi" && echo mono >"$irqi/trace_clock" && echo 16384 >"$irqi/buffer_size_kb" &&
	echo 1 >"$irqi/events/irq/irq_handler_entry/enable" &&
	echo 1 >"$irqi/events/irq/irq_handler_exit/enable" ||
	{ echo "SKIP: cannot make ftrace instance $irqi" >&2; exit 77; }
sleep 1
cp /proc/interrupts "$work/interrupts.before"
SYSPTD_RUNDIR="$work/run" "$BIN" record --name "wit$$" --window "$WINDOW" --freq "$FREQ" \
	-o "$work/out" -- env ASAN_OPTIONS=detect_leaks=0 "$PROG" "$work/log" "$RUN_MS" \
	>"$work/rec.out" 2>"$work/rec.err"
rc=$?
cp /proc/interrupts "$work/interrupts.after"
echo 0 >"$bare/events/sched/sched_waking/enable"
cat "$bare/trace" >"$work/bare.txt"
rmdir "$bare"
bare=""
echo 0 >"$irqi/tracing_on"
cat "$irqi/trace" >"$work/irqi.txt"
cat "$irqi/per_cpu"/cpu*/stats >"$work/irqi.stats" 2>/dev/null
rmdir "$irqi"
irqi=""
sleep 0.2
for p in $pids; do kill -INT "$p" 2>/dev/null; done
wait 2>/dev/null
pids=""
check_eq "sysptd record -- sptd-witness exit status" 0 "$rc"
[ "$rc" = 0 ] || grep -v "^sysptd: armed" "$work/rec.err" | tail -5 >&2
db=$(ls "$work"/out/*.db 2>/dev/null | head -1)
if [ -z "$db" ]; then
	cat "$work/rec.err" >&2
	bad "no incident written"
	echo "$passed passed, $failed failed"
	exit 1
fi
for f in samples sched; do
	[ -s "$work/$f.data" ] || { cat "$work"/perf*.log >&2; echo "SKIP: perf did not record $f here" >&2; exit 77; }
done
ws=$(q "$db" "SELECT value FROM meta WHERE key = 'window_start'")
we=$(q "$db" "SELECT value FROM meta WHERE key = 'window_end'")
main=$(awk '$1 == "process" { print $2 }' "$work/log")
echo "incident $db: window [$ws, $we], workload pid $main"


# ---- samples ----------------------------------------------------------------------
# "GROUP TID LEAF" per user-mode sample in the window: GROUP short (a
# short-lived process), pool (wit_pool*), other; LEAF the function,
# "[unknown]" without one.  Kernel-mode samples are left out on both sides:
# two samplers at once deliver each other's hrtimer interrupts late, at the
# next irq enable (seen: leaf pvm_irq_enable in 259 of perf's pool samples,
# 111 of sysptd's), which moves kernel shares by more than chance.  vDSO
# leaves too: perf 6.1 names none of them here ([unknown], 701 of a run's
# pool samples), sysptd names them (clock_gettime).  And PLT stubs: perf
# makes "NAME@plt" symbols of them from .rela.plt, sysptd names none (seen:
# 5 to 14 of a run's pool samples in clock_gettime@plt, 0 unnamed by perf;
# enough for z 3.9 on the unnamed share); sysptd's are told by their
# address in the file's .plt sections (readelf)
awk '$1 == "short" { print $2 }' "$work/log" | sort -u >"$work/short.pids"
perf script -i "$work/samples.data" --ns -F pid,tid,time,ip,sym,dso --max-stack 1 2>/dev/null |
	awk -v ws="$ws" -v we="$we" -v main="$main" "$perf_ns_awk"'
	NR == FNR { short[$1] = 1; next }
	/^ *[0-9]+\/[0-9]+ / { split($1, pt, "/"); t = ns($2); keep = t >= ws && t <= we
	                       g = (pt[1] in short) ? "short" : "other"; tid = pt[2]; next }
	keep && NF >= 1 { leaf = NF < 3 ? "[unknown]" : $2; keep = 0
	                  if ($NF != "([kernel.kallsyms])" && $NF != "([vdso])" && leaf !~ /@plt$/)
	                          print g, tid, leaf }' \
	"$work/short.pids" - >"$work/perf.samples"
awk '$1 == "thread" && $2 ~ /^wit_pool/ { print $3 }' "$work/log" >"$work/pool.tids"
"$BIN" query "$db" --format csv "SELECT p.pid, t.tid, coalesce(sy.name, '[unknown]'),
	coalesce(d.path, '-'), coalesce(sy.addr, -1)
	FROM sample s JOIN thread t ON t.utid = s.utid LEFT JOIN process p ON p.upid = t.upid
	LEFT JOIN callsite c ON c.id = s.callsite_id LEFT JOIN symbol sy ON sy.id = c.symbol_id
	LEFT JOIN dso d ON d.id = sy.dso_id
	WHERE s.ts BETWEEN $ws AND $we AND coalesce(d.path, '') NOT IN ('[kernel.kallsyms]', '[vdso]')" \
	2>"$work/err" | sed 1d | tr ',' ' ' >"$work/sptd.leaves"
# "PATH START END" of the .plt sections of each file an unnamed leaf is in
awk '$3 == "[unknown]" && $4 != "-" { print $4 }' "$work/sptd.leaves" | sort -u |
	while read -r path; do
		readelf -SW "$path" 2>/dev/null |
			awk '{ for (i = 1; i < NF; i++) if ($i ~ /^\.plt/) print $(i + 2), $(i + 4) }' |
			while read -r at size; do echo "$path $((0x$at)) $((0x$at + 0x$size))"; done
	done >"$work/plt.ranges"
awk 'FILENAME == ARGV[1] { short[$1] = 1; next }
     FILENAME == ARGV[2] { n++; pp[n] = $1; lo[n] = $2; hi[n] = $3; next }
     { if ($3 == "[unknown]") for (i = 1; i <= n; i++) if ($4 == pp[i] && $5 >= lo[i] && $5 < hi[i]) next
       print (($1 in short) ? "short" : "other"), $2, $3 }' \
	"$work/short.pids" "$work/plt.ranges" "$work/sptd.leaves" >"$work/sptd.samples"
# pool threads by tid on both sides
for f in perf sptd; do
	awk 'NR == FNR { pool[$1] = 1; next } { if ($2 in pool) $1 = "pool"; print }' \
		"$work/pool.tids" "$work/$f.samples" >"$work/$f.samples.g" &&
		mv "$work/$f.samples.g" "$work/$f.samples"
done
# share GROUP LEAF FILE -> "hits total"
share() { awk -v g="$1" -v l="$2" '$1 == g { n++; if ($3 == l) h++ } END { print h + 0, n + 0 }' "$3"; }
# compare LABEL GROUP LEAF: two-proportion test, |z| <= 4 and |diff| <= 0.10
compare() {
	set -- "$1" "$2" "$3" $(share "$2" "$3" "$work/sptd.samples") $(share "$2" "$3" "$work/perf.samples")
	verdict=$(awk -v a="$4" -v n="$5" -v b="$6" -v m="$7" 'BEGIN {
		if (n < 20 || m < 20) { print "few"; exit }
		p = a / n; q = b / m; r = (a + b) / (n + m); se = sqrt(r * (1 - r) * (1 / n + 1 / m))
		z = se > 0 ? (p - q) / se : 0; d = p - q < 0 ? q - p : p - q
		printf "%s sysptd %.3f (%d/%d) perf %.3f (%d/%d) z %.2f\n",
		       (z <= 4 && z >= -4 && d <= 0.10) ? "ok" : "BAD", p, a, n, q, b, m, z }')
	echo "samples, $1: $verdict"
	case $verdict in
	ok*) ok ;;
	few) bad "samples, $1: too few samples (sysptd $5, perf $7): the workload did not run" ;;
	*) bad "samples, $1: $verdict" ;;
	esac
}
# (a spawned child's samples before its exec are named by its parent's
# mappings, as perf names them: no floor for "[unknown]")
compare "short-lived processes in witness_short_hot" short witness_short_hot
compare "short-lived processes with no function" short "[unknown]"
compare "pool threads in witness_pool_hot" pool witness_pool_hot
compare "pool threads with no function" pool "[unknown]"

# ---- wakeups -----------------------------------------------------------------------
# perf's sched events in time order, and each wakeup of a task
# (tests/lib/perf_wakes.sh, shared with test_import_sched)
perf_sched_lines "$work/sched.data" >"$work/sched.txt"
for name in wit_ping wit_pong; do
	t=$(awk -v n="$name" '$1 == "thread" && $2 == n { print $3 }' "$work/log")
	# perf: "WAKING_NS LATENCY_NS WAKER" for wakings and switch-ins both inside
	perf_wakeups "$t" "$ws" "$we" <"$work/sched.txt" >"$work/perf.wake.$name"
	# sysptd: runnable rows naming a waker, neither edge cut (flags 0)
	"$BIN" query "$db" --format csv "SELECT r.ts, r.dur, wk.tid FROM thread_state r
		JOIN thread th ON th.utid = r.utid JOIN thread wk ON wk.utid = r.waker_utid
		WHERE th.tid = $t AND r.state = 'R' AND r.flags = 0 ORDER BY r.ts" 2>"$work/err" |
		sed 1d | tr ',' ' ' >"$work/sptd.wake.$name"
	# the two lists in time order, matched by waker and time (within 1 ms).
	# Of the matched, both ends (the waking, the switch in) within 2 us:
	# ftrace and perf read the clock separately for one event, ~0.4 us
	# apart.  A wakeup with one end off by more is one event stamped twice
	# with a stop of this vCPU between the two reads (the host's: this VM
	# reports no steal time; tens of us): at most 5 % (seen 1.3-3.2 % of
	# events at load 14-16 on 2 vCPUs, 0.8 % on a quiet one).  Both ends
	# off is no such stop but another pairing: at most 0.5 % (0 seen).
	# perf drops some tracepoint events ftrace records (seen: an IRQ entry
	# in 310): at most 1 % of sysptd's wakeups unmatched; perf's unmatched
	# at most 0.5 % (0 in every run here)
	res=$(awk 'NR == FNR { pt[NR] = $1; pl[NR] = $2; pw[NR] = $3; np = NR; next }
	{ st[FNR] = $1; sl[FNR] = $2; sw[FNR] = $3; ns = FNR }
	function abs(x) { return x < 0 ? -x : x }
	END {
		# one wakeup on both sides: the same waker and one end within
		# 2 us (the other may lie across a stop of the vCPU, seen up to
		# 1.8 ms: then the waking or the switch in is all that agrees),
		# or both within 1 ms (another pairing).  The wakeups of a task end
		# in the order they start: the side whose wakeup ends first is
		# the one without a partner (walking by the waking alone, a
		# waking stamped 1.8 ms apart left both unmatched and then paired
		# each wakeup of perf with the previous one of sysptd)
		i = 1; j = 1
		while (i <= np && j <= ns) {
			dw = abs(pt[i] - st[j]); di = abs(pt[i] + pl[i] - st[j] - sl[j])
			if (pw[i] == sw[j] && (((dw <= 2000 || di <= 2000) && dw + di <= 100000000) ||
			                       (dw <= 1000000 && di <= 1000000))) {
				d = dw > di ? dw : di
				if (dw > 2000 && di > 2000) { both++; bothoff[i] = 1; slack += abs(pl[i] - sl[j]) }
				else if (d > 2000) { nsplit++; slack += abs(pl[i] - sl[j]); if (d > smax_split) smax_split = d }
				partner[i] = j; rpartner[j] = i; matched++; i++; j++
			} else if (pt[i] + pl[i] < st[j] + sl[j]) { ponly++; i++ } else { sonly++; j++ }
		}
		ponly += np - i + 1; sonly += ns - j + 1
		for (i = 1; i <= np; i++) { psum += pl[i]; if (pl[i] > pmax) { pmax = pl[i]; pi = i } }
		for (i = 1; i <= ns; i++) { ssum += sl[i]; if (sl[i] > smax) { smax = sl[i]; si = i } }
		# the worst wakeup of each side is one the other side holds, not
		# both ends off (1), or not (0)
		same = (pi in partner) && !(pi in bothoff) && (si in rpartner) && !(rpartner[si] in bothoff)
		printf "%d %d %d %d %d %d %d %d %d %d %d %d %d %d %.0f %.0f\n", np, ns, matched, ponly, sonly, nsplit,
		       both, psum, ssum, pmax, smax, slack, smax_split, same, pt[pi], st[si] }' "$work/perf.wake.$name" "$work/sptd.wake.$name")
	set -- $res
	np=$1 ns=$2 matched=$3 ponly=$4 sonly=$5 split=$6 both=$7 psum=$8 ssum=$9
	shift 9
	pmax=$1 smax=$2 slack=$3 worst_split=$4 worst_same=$5 pworst_at=$6 sworst_at=$7
	lost=$(sed -n 's/.*and lost \([0-9]*\) chunks.*/\1/p' "$work/perf2.log")
	echo "wakeups of $name ($t): perf $np (perf lost ${lost:-0} chunks), sysptd $ns, matched $matched (waker, one end within 2 us or both within 1 ms)," \
	     "perf only $ponly, sysptd only $sonly; one end off by over 2 us $split (largest $worst_split ns)," \
	     "both ends $both; sum perf $psum ns, sysptd $ssum ns; max perf $pmax ns, sysptd $smax ns"
	if [ "$np" -ge 50 ]; then ok; else bad "wakeups of $name: perf saw only $np in the window"; fi
	if [ $((ponly * 200)) -le "$np" ]; then ok; else bad "wakeups of $name: $ponly of perf's $np not in the incident (0.5 % allowed)"; fi
	if [ $((sonly * 100)) -le "$ns" ]; then ok; else bad "wakeups of $name: $sonly of sysptd's $ns not seen by perf (1 % allowed)"; fi
	if [ $((split * 20)) -le "$matched" ]; then ok; else bad "wakeups of $name: $split of $matched with one end off perf's by more than 2 us (5 % allowed)"; fi
	if [ $((both * 200)) -le "$matched" ]; then ok; else bad "wakeups of $name: $both of $matched with both ends off perf's by more than 2 us (0.5 % allowed)"; fi
	if [ "$ponly" = 0 ] && [ "$sonly" = 0 ]; then
		d=$((psum - ssum)); d=${d#-}
		if [ "$d" -le $((2000 * np + slack)) ]; then ok; else bad "wakeups of $name: latency sum $ssum ns, perf $psum ns"; fi
	fi
	# the worst: within 2 us or 0.1 %; or, farther apart, each side's
	# worst is a wakeup the other side holds with one end agreeing (the
	# other stamped across a stop of the vCPU: its latency is what the
	# other side says of that wakeup)
	d=$((pmax - smax)); d=${d#-}
	if [ "$d" -le 2000 ] || [ "$d" -le $((pmax / 1000)) ] || [ "$worst_same" = 1 ]; then ok; else
		bad "wakeups of $name: worst latency $smax ns (waking at $sworst_at), perf $pmax ns (waking at $pworst_at);" \
		    "and these are not wakeups both hold with one end agreeing"
	fi
done

# ---- wakeups from interrupt context ---------------------------------------------------
# wit_sleeper (nanosleep) and wit_timer (timerfd) are woken by hrtimers, in
# hard irq context: the bare instance's records say so (flag h/H); sysptd's
# rows must say the same (flags 32) and never name the task the interrupt
# happened to stop as the waker.  Counts within max(2, 2 %): a waking of a
# task already runnable opens no row.
for name in wit_sleeper wit_timer; do
	t=$(awk -v n="$name" '$1 == "thread" && $2 == n { print $3 }' "$work/log")
	set -- $(awk -v t="$t" -v ws="$ws" -v we="$we" '
		/sched_waking:/ && $0 ~ (" pid=" t " ") {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { ts = $i; fl = $(i - 1) }
			sub(/:$/, "", ts); split(ts, a, "."); n = a[1] * 1000000000 + a[2] * 10 ^ (9 - length(a[2]))
			if (n < ws || n > we) next
			all++; c = substr(fl, 3, 1); if (c == "h" || c == "H") hard++ }
		END { printf "%d %d\n", all, hard }' "$work/bare.txt")
	b_all=$1 b_hard=$2
	s_hard=$(q "$db" "SELECT count(*) FROM thread_state r JOIN thread th ON th.utid = r.utid
		WHERE th.tid = $t AND r.state = 'R' AND r.flags & 32 AND r.ts BETWEEN $ws AND $we")
	s_task=$(q "$db" "SELECT count(*) FROM thread_state r JOIN thread th ON th.utid = r.utid
		JOIN thread wk ON wk.utid = r.waker_utid WHERE th.tid = $t AND r.state = 'R'
		AND wk.tid != 0 AND r.ts BETWEEN $ws AND $we")
	echo "wakeups of $name ($t) from interrupt context: bare instance $b_hard of $b_all in hard irq; sysptd $s_hard rows from hard irq, $s_task naming a task as waker"
	if [ "$b_hard" -ge 50 ] && [ $((b_hard * 10)) -ge $((b_all * 9)) ]; then ok; else
		bad "wakeups of $name: the bare instance saw only $b_hard of $b_all in hard irq (the workload's timers)"
	fi
	d=$((b_hard - s_hard)); d=${d#-}
	if [ "$d" -le 2 ] || [ $((d * 50)) -le "$b_hard" ]; then ok; else
		bad "wakeups of $name: $s_hard rows say hard irq, the bare instance $b_hard wakings"
	fi
	if [ "$s_task" -le $((b_all - b_hard + 2)) ]; then ok; else
		bad "wakeups of $name: $s_task rows name a task as waker, the bare instance saw $((b_all - b_hard)) wakings from a task"
	fi
done

# Perfetto holds them as its own importer would: irq_context 1 on as many
# runnable rows as the incident flags (within 1 %: rows Perfetto cannot
# place are counted as skipped by the export)
tp=${SPTD_TRACE_PROCESSOR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/perfetto/trace_processor}
if [ -x "$tp" ] && "$BIN" export "$db" -o "$work/w.pftrace" >/dev/null 2>&1; then
	echo "SELECT 'irqctx=' || count(*) FROM thread_state WHERE irq_context = 1;" >"$work/tp.sql"
	p_irq=$("$tp" -q "$work/tp.sql" "$work/w.pftrace" 2>/dev/null | sed -n 's/.*irqctx=\([0-9][0-9]*\).*/\1/p')
	s_irq=$(q "$db" "SELECT count(*) FROM thread_state WHERE state = 'R' AND flags & 96")
	echo "Perfetto: $p_irq runnable rows with irq_context 1; the incident $s_irq"
	d=$((${p_irq:-0} - s_irq)); d=${d#-}
	if [ "$s_irq" -gt 0 ] && [ $((d * 100)) -le "$s_irq" ]; then ok; else
		bad "Perfetto: ${p_irq:-none} rows with irq_context 1, the incident flags $s_irq"
	fi
else
	echo "Perfetto: trace_processor absent ($tp): irq_context not checked"
fi

# ---- tasks --------------------------------------------------------------------------
"$BIN" query "$db" --format csv "SELECT t.tid, coalesce(p.pid, -1), t.name FROM thread t
	LEFT JOIN process p ON p.upid = t.upid WHERE t.tid > 0" 2>"$work/err" | sed 1d | tr ',' ' ' \
	>"$work/sptd.tasks"
res=$(awk 'NR == FNR { if ($1 == "thread") { want[$3] = $4; name[$3] = $2 } else if ($1 == "short") { want[$2] = $2; name[$2] = "" }; next }
	($1 in want) { seen++; if ($2 != want[$1]) { wrong++; print "  tid " $1 " (" name[$1] "): process " $2 ", is " want[$1] > "/dev/stderr" }
	               if (name[$1] != "" && $3 != name[$1]) { misnamed++; print "  tid " $1 ": named " $3 ", is " name[$1] > "/dev/stderr" } }
	END { printf "%d %d %d\n", seen, wrong, misnamed }' "$work/log" "$work/sptd.tasks")
set -- $res
echo "tasks: $1 of the workload's threads and processes in the incident, $2 in the wrong process, $3 misnamed"
if [ "$1" -ge 10 ]; then ok; else bad "tasks: only $1 of the workload's tasks in the incident"; fi
check_eq "tasks: threads in another process than the program says" 0 "$2"
check_eq "tasks: threads named otherwise than the program says" 0 "$3"

# ---- irqs ---------------------------------------------------------------------------
# The test's own instance: per hard irq handler (number and name), the
# handlers that entered and exited on one CPU, their entry inside the window
# 1 ms from either edge (the instance and sysptd's read the clock
# separately for one event); sysptd's irq_slice rows there, start and end
# seen (flags 0), must be exactly as many.  Both at most /proc/interrupts'
# count of that number over the whole run.
ws_in=$((ws + 1000000)) we_in=$((we - 1000000))
overrun=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' "$work/irqi.stats")
awk -v ws="$ws_in" -v we="$we_in" '
	function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	/irq_handler_(entry|exit):/ {
		cpu = ""; ts = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^\[[0-9]+\]$/) cpu = substr($i, 2, length($i) - 2)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = $i
		}
		sub(/:$/, "", ts); split(ts, a, "."); t = a[1] * 1000000000 + a[2] * 10 ^ (9 - length(a[2]))
		if (/irq_handler_entry:/) { open[cpu] = field("irq"); at[cpu] = t; nm[cpu] = field("name"); next }
		if (open[cpu] == field("irq") && at[cpu] >= ws && at[cpu] <= we) n[open[cpu] " " nm[cpu]]++
		open[cpu] = ""
	}
	END { for (k in n) print k, n[k] }' "$work/irqi.txt" | sort -n >"$work/inst.irqs"
"$BIN" query "$db" --format csv "SELECT irq, name, count(*) FROM irq_slice WHERE ts BETWEEN $ws_in
	AND $we_in AND flags = 0 GROUP BY irq, name ORDER BY irq" 2>"$work/err" | sed 1d | tr ',' ' ' >"$work/sptd.irqs"
# "IRQ COUNT": /proc/interrupts over the run, per number
awk 'NR == FNR { if ($1 ~ /^[0-9]+:$/) { b[$1] = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) b[$1] += $i }; next }
	$1 ~ /^[0-9]+:$/ { a = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) a += $i; k = $1; sub(/:$/, "", k); print k, a - b[$1] }' \
	"$work/interrupts.before" "$work/interrupts.after" >"$work/proc.irqs"
"$BIN" query "$db" --format csv "SELECT irq, count(*) FROM irq_slice GROUP BY irq" 2>"$work/err" |
	sed 1d | tr ',' ' ' >"$work/sptd.irqs.all"
res=$(awk 'FILENAME == ARGV[1] { p[$1 " " $2] = $3; next }
	FILENAME == ARGV[2] { s[$1 " " $2] = $3; next }
	FILENAME == ARGV[3] { proc[$1] = $2; next }
	{ all[$1] = $2 }
	END { for (k in p) { n++; if (s[k] != p[k]) { bad++; printf "  irq %s: instance %d, sysptd %d\n", k, p[k], s[k] > "/dev/stderr" } }
	      for (k in s) if (!(k in p)) { bad++; printf "  irq %s: instance 0, sysptd %d\n", k, s[k] > "/dev/stderr" }
	      for (k in all) if ((k in proc) && all[k] > proc[k]) { over++; printf "  irq %s: incident %d, /proc/interrupts %d\n", k, all[k], proc[k] > "/dev/stderr" }
	      printf "%d %d %d\n", n, bad, over }' "$work/inst.irqs" "$work/sptd.irqs" "$work/proc.irqs" "$work/sptd.irqs.all")
set -- $res
echo "irqs (instance overruns $overrun): $1 handlers in the instance's window, $2 counted otherwise by sysptd (exact)," \
     "$3 IRQ numbers over /proc/interrupts: $(tr '\n' ' ' <"$work/inst.irqs")"
if [ "$1" -ge 1 ]; then ok; else bad "irqs: the instance saw no hard irq handler in the window"; fi
if [ "$overrun" = 0 ]; then check_eq "irqs: handlers counted otherwise than the test's instance" 0 "$2"; else
	echo "irqs: the test's instance overran ($overrun events lost): counts not compared"
fi
check_eq "irqs: IRQ numbers with more rows in the incident than /proc/interrupts counted" 0 "$3"
# the disk: the IRQ with the most handlers while wit_disk wrote, by /proc/interrupts
disk=$(awk 'NR == FNR { if ($1 ~ /^[0-9]+:$/) { b[$1] = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) b[$1] += $i }; next }
	$1 ~ /^[0-9]+:$/ && /virtio|nvme|ahci|ata|blk|req/ { a = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) a += $i
	                  if (a - b[$1] > best) { best = a - b[$1]; irq = $1 } }
	END { sub(/:$/, "", irq); print irq, best + 0 }' "$work/interrupts.before" "$work/interrupts.after")
set -- $disk
if [ -n "$1" ] && [ "$2" -gt 0 ]; then
	n=$(q "$db" "SELECT count(*) FROM irq_slice WHERE irq = $1")
	echo "irqs: device IRQ $1: /proc/interrupts $2 over the whole run, the incident $n"
	if [ "$n" -gt 0 ]; then ok; else bad "irqs: device IRQ $1: none in the incident, /proc/interrupts $2"; fi
else
	echo "irqs: no device IRQ fired here during the run (no disk interrupts: /proc/interrupts)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
