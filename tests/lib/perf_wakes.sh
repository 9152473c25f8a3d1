# shellcheck shell=sh
# perf_wakes.sh — the second witness's wakeups, as the shell tests that hold
# sysptd against `perf sched record` read them (test_import_sched.sh,
# test_witness.sh).  Sourced; needs perf.
#
#   perf_sched_lines DATA
#       perf script's "TID TIME EVENT: FIELDS" lines of perf.data DATA, in
#       time order as the kernel emitted them: a waking stamped with the
#       very time of the switch it led to goes before that switch (perf's
#       clock clamps on a guest whose TSC is unstable, and perf script may
#       then print the switch first)
#   perf_wakeups TID [WS WE] <LINES
#       "WAKING_NS LATENCY_NS WAKER_TID" for each wakeup of thread TID in
#       those lines: a sched_waking of TID while it was blocked (its last
#       switch out in a state other than R/R+), paired with its next switch
#       in.  A switch out with a waking still pending drops it: its switch
#       in was lost (perf drops a few events), and the incident cuts that
#       row too (flags 2).  With WS and WE (ns): only wakeups whose waking
#       is at or after WS and whose switch in is at or before WE.
#   $perf_ns_awk
#       an awk function ns(S): perf's "S.NNNNNNNNN:" time stamp as integer ns

perf_ns_awk='function ns(s,   p) { sub(/:$/, "", s); p = index(s, "."); return (substr(s, 1, p - 1) substr(s, p + 1)) + 0 }'

perf_sched_lines() {
	perf script -i "$1" --ns -F tid,time,event,trace 2>/dev/null |
		awk 'held != "" && $3 == "sched:sched_waking:" && $2 == held_ts { print; next }
		     { if (held != "") print held; held = $0; held_ts = $2 }
		     END { if (held != "") print held }'
}

perf_wakeups() {
	awk -v t="$1" -v ws="${2:-}" -v we="${3:-}" "$perf_ns_awk"'
	function field(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	$3 == "sched:sched_switch:" {
		if (field("prev_pid") == t) { st = field("prev_state"); blocked = (st != "R" && st != "R+"); pending = "" }
		if (field("next_pid") == t && pending != "") {
			if ((ws == "" || pending >= ws + 0) && (we == "" || ns($2) <= we + 0))
				printf "%.0f %.0f %s\n", pending, ns($2) - pending, waker
			pending = ""
		}
		next
	}
	$3 == "sched:sched_waking:" && field("pid") == t && blocked && pending == "" {
		pending = ns($2); waker = $1; blocked = 0
	}'
}
