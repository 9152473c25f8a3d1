#!/bin/sh
# test_dec_power.sh — what PT says about the CPU itself (issue 13.3), against
# the generator's ground truth: sptd-ptgen --power writes C-states between
# slices (MWAIT, PWRE, EXSTOP+FUP; PWRX after the next switch-in), a CBR
# change at each switch-in and a PTWRITE in each slice, and lists every such
# packet with its exact time in power.txt.  The real `sysptd import` must
# give exactly these as cpu_freq, cpu_idle and ptwrite rows (times, values,
# C-states as the MWAIT hint numbers them, the requested state, the wake
# reason, the open C-state at the end flagged END_TRUNCATED), each PTWRITE
# on the task the schedule has on its CPU; the Perfetto export must make
# trace_processor's own cpufreq and cpuidle counters and ptwrite instants of
# them (when trace_processor is there); and PT damaged in the middle must
# still import, every row it gives still true.  On the real captures with
# timing (perf.data of Skylake and Broadwell), the ratios must be those of
# the CBR packets in perf's own packet dump, and each CBR event perf's
# decoder reports a row at the same ns with the same frequency.
#
# Usage: test_dec_power.sh SYSPTD PTGEN PROGS_DIR   (root: ptrace; exit 77 else)
set -u
bin=${1:?usage: test_dec_power.sh SYSPTD PTGEN PROGS_DIR}
gen=${2:?}
progs=${3:?}
tp=${SPTD_TRACE_PROCESSOR:-$(dirname "$0")/../../../shared/tools/perfetto/trace_processor}

[ "$(id -u)" = 0 ] || { echo "SKIP: sptd-ptgen needs ptrace (root)"; exit 77; }
work=$(mktemp -d /var/tmp/sptd-power-XXXXXX)
# import reads its --image/--maps/--tasks/--sched files as nobody (as root)
chmod 755 "$work"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

d=$work/gen
if ! "$gen" -o "$d" --cpus 2 --slice-insns 500 --timing tsc --power --verify \
	-- "$progs/ptprog-fib" -- "$progs/ptprog-fptr" >"$work/gen.log" 2>&1; then
	cat "$work/gen.log"
	grep -q "not permitted" "$work/gen.log" && { echo "SKIP: ptrace not permitted"; exit 77; }
	echo "FAIL: sptd-ptgen --power"
	exit 1
fi
cfg() { sed -n "s/^$1=//p" "$d/config.txt"; }
import() { # PT0 PT1 OUT
	"$bin" import --pt="$1" --pt="$2" --maps="$d/maps.txt" --tasks="$d/tasks.txt" \
		--sched="$d/sched.txt" --cpu-id="$(cfg cpu_family)/$(cfg cpu_model)/$(cfg cpu_stepping)" \
		--mtc-freq="$(cfg mtc_freq)" --nom-freq="$(cfg nom_freq)" \
		--cpuid15="$(cfg cpuid15_eax)/$(cfg cpuid15_ebx)" --tsc-hz="$(cfg tsc_hz)" \
		-o "$3" >"$work/import.log" 2>&1
}
q() { "$bin" query "$1" --format csv "$2" | tail -n +2; }
inc=$work/x.db
import "$d/cpu0.pt" "$d/cpu1.pt" "$inc" || { cat "$work/import.log"; bad "import"; exit 1; }

# the truth, as the rows must read (bus clock: tsc_hz / nom_freq)
bus_khz=$(( $(cfg tsc_hz) / $(cfg nom_freq) / 1000 ))
awk -v khz="$bus_khz" '$1 == "cbr" { print $3 "," $2 "," $4 "," $4 * khz }' "$d/power.txt" |
	sort -t, -k2,2n -k1,1n >"$work/want_freq"
awk '
	{ last[$2] = $3 }
	$1 == "mwait" { req[$2] = int($4 / 16) + 1 "," $4 % 16 }
	$1 == "pwre" { open[$2] = 1; ts[$2] = $3; st[$2] = ($4 + 1) % 16 "," $5 }
	$1 == "pwrx" && open[$2] {
		print ts[$2] "," $3 - ts[$2] "," $2 "," st[$2] "," req[$2] "," ($4 + 1) % 16 "," \
		      ($5 + 1) % 16 ",interrupt,0,0"
		open[$2] = 0 }
	END { for (c in open) if (open[c])
		print ts[c] "," last[c] - ts[c] "," c "," st[c] "," req[c] ",,,,0,2" }' \
	"$d/power.txt" | sort -t, -k3,3n -k1,1n >"$work/want_idle"
awk '$1 == "ptw" { printf "%s,%s,%s,%s,%s\n", $3, $2, $4, $5, $7 }' "$d/power.txt" |
	sort -t, -k2,2n -k1,1n >"$work/want_ptw"

q "$inc" "SELECT ts, cpu, cbr, freq_khz FROM cpu_freq ORDER BY cpu, ts" >"$work/got_freq"
q "$inc" "SELECT ts, dur, cpu, state, sub_state, requested, requested_sub, last_state,
	deepest_state, wake, hw, flags FROM cpu_idle ORDER BY cpu, ts" >"$work/got_idle"
q "$inc" "SELECT ts, cpu, payload, size, printf('0x%x', ip) FROM ptwrite ORDER BY cpu, ts" \
	>"$work/got_ptw"
for t in freq idle ptw; do
	[ -s "$work/want_$t" ] || bad "the generator wrote no $t packets"
	if cmp -s "$work/want_$t" "$work/got_$t"; then
		echo "ok: $t: $(wc -l <"$work/got_$t") rows as the truth says"
	else
		bad "$t rows differ from the truth (want < > got):"
		diff "$work/want_$t" "$work/got_$t" | head -10
	fi
done
# the power packets take nothing from the flow: every call and return as
# the generator made them (a PTWRITE's FUP once hid the call into it)
for k in calls returns; do
	got=$(q "$inc" "SELECT sum(value) FROM stats WHERE name = '$k'")
	[ "$got" = "$(cfg $k)" ] && echo "ok: $k: $got, as the truth" ||
		bad "$k: $got decoded, the generator made $(cfg $k)"
done
# every PTWRITE on the task the schedule runs there and then
n=$(q "$inc" "SELECT count(*) FROM ptwrite p WHERE utid IS NULL OR NOT EXISTS (SELECT 1 FROM
	sched_slice s WHERE s.cpu = p.cpu AND s.utid = p.utid AND p.ts BETWEEN s.ts AND s.ts + s.dur)")
[ "$n" = 0 ] && echo "ok: every ptwrite on its CPU's running task" ||
	bad "$n ptwrite rows are not on the task their CPU ran"

# --report power: entries per CPU and C-state, and total time of the
# C-states whose both ends were seen, as the truth has them
"$bin" query "$inc" --report power --format csv >"$work/report" 2>&1 || bad "--report power"
awk -F, '$10 == 0 { n[$3 "," "C" $4]++; d[$3 "," "C" $4] += $2 } $10 != 0 { n[$3 "," "C" $4]++ }
	END { for (k in n) print k "," n[k] }' "$work/want_idle" | sort >"$work/rep_want"
awk -F, 'NF == 8 && $2 ~ /^C[0-9]+$/ { print $1 "," $2 "," $3 }' "$work/report" | sort >"$work/rep_got"
cmp -s "$work/rep_want" "$work/rep_got" && [ -s "$work/rep_got" ] &&
	echo "ok: --report power: entries per CPU and C-state" ||
	{ bad "--report power C-state entries differ"; diff "$work/rep_want" "$work/rep_got" | head -5; }
[ "$(awk -F, 'NF == 4 && $2 ~ /^[0-9]+$/ { s += $2 } END { print s }' "$work/report")" = \
	"$(wc -l <"$work/want_ptw")" ] && echo "ok: --report power: every ptwrite" ||
	bad "--report power: ptwrite counts"

# Perfetto: trace_processor's own counters and instants
if [ -x "$tp" ]; then
	"$bin" export "$inc" -o "$work/x.pftrace" >/dev/null 2>"$work/export.err" ||
		{ cat "$work/export.err"; bad "export"; }
	cat >"$work/tp.sql" <<'SQL'
SELECT 'freq', t.cpu, c.ts, CAST(c.value AS INT) FROM counter c JOIN cpu_counter_track t ON t.id = c.track_id WHERE t.name = 'cpufreq'
UNION ALL SELECT 'idle', t.cpu, count(*), 0 FROM counter c JOIN cpu_counter_track t ON t.id = c.track_id WHERE t.name = 'cpuidle' GROUP BY t.cpu
UNION ALL SELECT 'ptw', 0, count(*), 0 FROM slice WHERE name = 'ptwrite'
UNION ALL SELECT 'err', 0, count(*), 0 FROM stats WHERE value > 0 AND severity IN ('error', 'data_loss')
ORDER BY 1, 2, 3;
SQL
	"$tp" -q "$work/tp.sql" "$work/x.pftrace" 2>"$work/tp.err" | tail -n +2 | tr -d '"' \
		>"$work/tp.out" || { cat "$work/tp.err"; bad "trace_processor"; }
	awk -F, '{ print "freq," $2 "," $1 "," $4 }' "$work/want_freq" | sort -t, -k2,2n -k3,3n \
		>"$work/tp_want"
	grep '^freq,' "$work/tp.out" >"$work/tp_freq"
	cmp -s "$work/tp_want" "$work/tp_freq" && echo "ok: trace_processor's cpufreq counters" ||
		{ bad "trace_processor's cpufreq counters differ"; diff "$work/tp_want" "$work/tp_freq" | head -5; }
	for c in 0 1; do
		want=$(( $(awk -F, -v c=$c '$3 == c' "$work/want_idle" | wc -l) * 2 ))
		got=$(awk -F, -v c=$c '$1 == "idle" && $2 == c { print $3 }' "$work/tp.out")
		[ "$want" = "${got:-0}" ] && echo "ok: cpu $c: $got cpuidle counter values" ||
			bad "cpu $c: cpuidle counter values $got, want $want (entry and exit of each)"
	done
	[ "$(awk -F, '$1 == "ptw" { print $3 }' "$work/tp.out")" = "$(wc -l <"$work/want_ptw")" ] &&
		echo "ok: ptwrite instants" || bad "ptwrite instants: $(grep '^ptw' "$work/tp.out")"
	[ "$(awk -F, '$1 == "err" { print $3 }' "$work/tp.out")" = 0 ] ||
		bad "trace_processor reports errors: $(cat "$work/tp.out")"
else
	echo "note: no trace_processor at $tp: the Perfetto part is not checked"
fi
# the JSON export: a counter value per ratio and per C-state edge, and the
# ptwrite instants
"$bin" export "$inc" --format json -o "$work/x.json" 2>"$work/json.err" ||
	{ cat "$work/json.err"; bad "export --format json"; }
want=$(( $(wc -l <"$work/want_freq") + 2 * $(wc -l <"$work/want_idle") ))
grep -q " $want power events, $(wc -l <"$work/want_ptw") ptwrites," "$work/json.err" &&
	[ "$(grep -o '"ph":"C"' "$work/x.json" | wc -l)" = "$want" ] &&
	[ "$(grep -o '"name":"ptwrite"' "$work/x.json" | wc -l)" = "$(wc -l <"$work/want_ptw")" ] &&
	echo "ok: JSON export: $want counter values, the ptwrites" ||
	{ bad "JSON export of the power events"; cat "$work/json.err"; }

# damaged PT.  Random bytes in the middle of CPU 0's trace: libipt reads
# them as whatever packets they look like (a made-up PWRX may close a real
# C-state), so only the import is checked: it goes on, exit 0.  Then bytes
# that are no packet at all (02 02: an extended opcode the SDM does not
# define): a decode error, a resync at the next PSB, and every row the
# import still gives is true.
size=$(stat -c %s "$d/cpu0.pt")
cp "$d/cpu0.pt" "$work/bad0.pt"
head -c 64 /dev/urandom | dd of="$work/bad0.pt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
import "$work/bad0.pt" "$d/cpu1.pt" "$work/rnd.db" || { cat "$work/import.log"; bad "import of random bytes in PT"; }
cp "$d/cpu0.pt" "$work/bad0.pt"
printf '\002\002%.0s' $(seq 32) | dd of="$work/bad0.pt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
import "$work/bad0.pt" "$d/cpu1.pt" "$work/bad.db" || { cat "$work/import.log"; bad "import of damaged PT"; }
q "$work/bad.db" "SELECT ts, cpu, cbr, freq_khz FROM cpu_freq ORDER BY cpu, ts" >"$work/bad_freq"
q "$work/bad.db" "SELECT ts, cpu, payload, size, printf('0x%x', ip) FROM ptwrite ORDER BY cpu, ts" \
	>"$work/bad_ptw"
q "$work/bad.db" "SELECT ts, dur, cpu, state, sub_state, requested, requested_sub, last_state,
	deepest_state, wake, hw, flags FROM cpu_idle WHERE flags = 0 ORDER BY cpu, ts" >"$work/bad_idle"
for t in ptw idle; do
	sort "$work/want_$t" >"$work/s_$t"
	extra=$(sort "$work/bad_$t" | comm -23 - "$work/s_$t" | wc -l)
	lost=$(( $(wc -l <"$work/want_$t") - $(wc -l <"$work/bad_$t") ))
	[ "$extra" = 0 ] && [ "$lost" -gt 0 ] &&
		echo "ok: damaged: every $t row is true ($lost lost to the damage)" ||
		bad "damaged: $extra $t rows are not in the truth, $lost lost"
done
n=$(q "$work/bad.db" "SELECT count(*) FROM gap WHERE cpu = 0 AND reason LIKE 'pt: decode error%'")
[ "$n" -gt 0 ] && echo "ok: damaged: the damage is a gap" || bad "damaged: no decode-error gap on cpu 0"
# a ratio change may be seen late after the damage (its CBR repeats in the
# next PSB+), never one the CPU did not have
awk -F, '{ print $2 "," $3 }' "$work/want_freq" | sort -u >"$work/ratios"
extra=$(awk -F, '{ print $2 "," $3 }' "$work/bad_freq" | sort -u | comm -23 - "$work/ratios" | wc -l)
[ "$extra" = 0 ] && echo "ok: damaged: every cpu_freq ratio is one the CPU had" ||
	bad "damaged: $extra cpu_freq ratios the CPU never had"
[ "$(wc -l <"$work/bad_ptw")" -gt 0 ] || bad "damaged: nothing decoded at all"
# real captures (Intel Skylake and Broadwell, perf.data with timing): the
# ratios are the CBR packets' own (perf's packet dump: each change), and
# every CBR event perf's decoder reports is a row at the same ns with the
# same frequency (perf rounds to MHz)
fix=${SPTD_FIXTURES:-$(dirname "$0")/../../../shared/fixtures}/real-pt
if command -v perf >/dev/null 2>&1 && [ -d "$fix" ]; then
	for f in hase-control_flow hase-loopy hase-control_flow-snapshot; do
		[ -f "$fix/$f/perf.data" ] || { bad "fixture $f missing"; continue; }
		"$bin" import "$fix/$f/perf.data" --symfs "$fix/$f/symfs" -o "$work/$f.db" >/dev/null 2>&1 ||
			{ bad "$f: import"; continue; }
		q "$work/$f.db" "SELECT ts, cbr, freq_khz FROM cpu_freq ORDER BY cpu, ts" >"$work/$f.rows"
		perf script -i "$fix/$f/perf.data" -D 2>/dev/null |
			awk '$NF ~ /^0x/ && $(NF - 1) == "CBR" { print $NF }' |
			while read -r h; do echo $((h)); done | uniq >"$work/$f.raw"
		cut -d, -f2 "$work/$f.rows" >"$work/$f.got"
		[ -s "$work/$f.raw" ] && cmp -s "$work/$f.raw" "$work/$f.got" &&
			echo "ok: $f: ratios $(tr '\n' ' ' <"$work/$f.got")as its CBR packets" ||
			bad "$f: cpu_freq ratios $(tr '\n' ' ' <"$work/$f.got"), its CBR packets $(tr '\n' ' ' <"$work/$f.raw")"
		perf script -i "$fix/$f/perf.data" --itrace=p -F time,synth --ns 2>/dev/null |
			awk '/cbr:/ { t = $1; sub(":", "", t); sub("\\.", "", t); print t, $3, $5 }' >"$work/$f.perf"
		[ -s "$work/$f.perf" ] || bad "$f: perf reports no CBR event"
		while read -r t c mhz; do
			awk -F, -v t="$t" -v c="$c" -v m="$mhz" '$1 == t && $2 == c && $3 / 1000 - m <= 1 && m - $3 / 1000 <= 1 { f = 1 }
				END { exit !f }' "$work/$f.rows" && echo "ok: $f: perf's cbr $c at $t" ||
				bad "$f: perf's cbr $c ($mhz MHz) at $t is not a row: $(tr '\n' ' ' <"$work/$f.rows")"
		done <"$work/$f.perf"
	done
else
	echo "note: no perf or no fixtures: the real captures are not checked"
fi
[ "$fail" = 0 ] && echo "PASS: PT's power events and PTWRITEs as the generator wrote them"
exit $fail
