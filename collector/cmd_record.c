/* cmd_record.c — `sysptd [record]`: the recording service's command line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sptd_col.h"
#include "sptd_col_derive.h"
#include "sptd_col_perf.h"
#include "sptd_col_record.h"

/* ---- options ---------------------------------------------------------------- */

static const char record_usage[] =
"Usage: sysptd [record] [OPTIONS]\n"
"       sysptd record [OPTIONS] -- CMD [ARGS...]\n"
"\n"
"Keep a rolling record of what every CPU did and, when a trigger fires,\n"
"freeze the last --window of it into one incident file (SQLite).\n"
"With -- CMD: run CMD (once armed) and write an incident of the last\n"
"window when it exits (plus any trigger's while it runs); sysptd's exit\n"
"status is then CMD's (128+N when a signal N killed it).\n"
"Needs root.\n"
"\n"
"Options:\n"
"  -w, --window DUR       history kept before the trigger (default 10ms)\n"
"      --post DUR         history kept after the trigger (default 0)\n"
"  -t, --trigger SPEC     fire on SPEC (repeatable; any one fires):\n"
"                           irq[=NUM|NAME][,min=DUR]  a hard IRQ handler returned\n"
"                             (NUM/NAME as in /proc/interrupts, with a handler;\n"
"                             min: entry->exit >= DUR)\n"
"                           tracepoint=SYS:EVENT[,filter=EXPR]  that tracepoint hit\n"
"                             (EXPR in ftrace filter syntax)\n"
"                           latency=DUR  a task waited DUR or more between its\n"
"                             wakeup and running (sched_waking -> sched_switch)\n"
"                           uprobe=PATH:SYMBOL  any process ran that function\n"
"                           break=PID:SYMBOL  that process ran that function\n"
"                             (a hardware breakpoint: no code patched)\n"
"                           break=/PATH:SYMBOL  any process that maps that file\n"
"                             ran that function (found within a second when it\n"
"                             starts later; one breakpoint per thread)\n"
"                           watch=PID:SYMBOL[+OFF]|PID:0xADDR[,w|rw][,len=1|2|4|8]\n"
"                             that process wrote (w, default) or read/wrote\n"
"                             (rw) the variable: a hardware watchpoint; the\n"
"                             trigger row says who, where, the value before\n"
"                             and after, and silent stores (query --report\n"
"                             watch).  break/watch: 4 debug registers per CPU\n"
"                           timer=DUR  periodically\n"
"                         Manual triggers are always armed: `sysptd snapshot`\n"
"                         or SIGUSR2.\n"
"  -e, --event SYS:EVENT[,filter=EXPR]\n"
"                         also record this tracepoint (repeatable; any in\n"
"                         `sysptd list-events`): its records go into the\n"
"                         incident's ftrace_event table and the export\n"
"      --offcpu           also keep the kernel and user stack of every task\n"
"                         switched out (a perf event on sched:sched_switch):\n"
"                         each blocked thread_state row names the function\n"
"                         it blocked in (`query --report offcpu`).  Costs a\n"
"                         stack walk per context switch\n"
"      --call-graph MODE  how user stacks are walked, as perf spells it:\n"
"                           fp  the kernel's frame-pointer walk (default: it\n"
"                             loses frames of code built without frame\n"
"                             pointers, such as Debian's libc)\n"
"                           dwarf[,SIZE]  also copy SIZE bytes of user stack\n"
"                             (default 8192, at most 65528) and the user\n"
"                             registers with every sample and off-CPU stack,\n"
"                             unwound with DWARF CFI (.eh_frame, .debug_frame,\n"
"                             separate debug files); the copies stay in the\n"
"                             incident.  Costs ring space and copying per\n"
"                             sample (BENCHMARKS.md)\n"
"  -s, --source SRC       auto (default), pt, or sample.  auto picks pt when\n"
"                         /sys/bus/event_source/devices/intel_pt exists, else\n"
"                         sample (per-CPU cpu-clock sampling with call stacks)\n"
"  -F, --freq HZ          sampling frequency per CPU (default 1000: armed, it\n"
"                         then costs what the ftrace instance alone costs;\n"
"                         `sysptd doctor` measures the cost per sample here)\n"
"  -b, --buffer SIZE      ftrace ring per CPU (default: sized from --window);\n"
"                         with --source pt: the AUX (PT) ring per CPU instead\n"
"      --timing LEVEL     PT timing: low (TSC+MTC), normal (+CYC, default) or\n"
"                         high (+noretcomp: every return timed)\n"
"      --power            PT: also C-state entries and exits (pwr_evt) and\n"
"                         PTWRITE values (ptw, fup_on_ptw) where the CPU has\n"
"                         them: the incident's cpu_idle and ptwrite tables\n"
"                         (cpu_freq, from CBR, comes without it)\n"
"      --user-only        leave kernel code out of samples/trace\n"
"      --image-cache DIR  PT: copy every mapped executable and library into\n"
"                         DIR/<build-id>/<name> once (default\n"
"                         /var/lib/sysptd/images), so incidents decode after\n"
"                         the files change\n"
"      --portable         PT: also embed those files in the incident, so it\n"
"                         decodes on another machine\n"
"  -n, --count N          exit after N incidents (default: run until stopped)\n"
"      --on-stop WHAT     on SIGINT/SIGTERM/SIGHUP: save (write the last\n"
"                         window as a final incident, then exit) or discard.\n"
"                         Default: save in the foreground of a terminal (Ctrl+C\n"
"                         keeps what was recorded, as with perf), discard as a\n"
"                         service (no terminal: systemctl stop writes nothing)\n"
"      --once             same as --count 1\n"
"      --cooldown DUR     ignore triggers for DUR after an incident (default 0)\n"
"  -o, --output DIR       where incident files go (default /var/lib/sysptd).\n"
"                         It must be root's and writable by root alone (the\n"
"                         directories above it too), and not a symlink:\n"
"                         otherwise other users could replace or forge\n"
"                         incidents (exit status 2)\n"
"      --unsafe-output    accept such a directory anyway\n"
"      --name NAME        a recorder of its own beside the service (or another\n"
"                         named one): its own ftrace instance sysptd-NAME, lock\n"
"                         and control socket (`sysptd snapshot --name NAME`);\n"
"                         --output defaults to /var/lib/sysptd/NAME\n"
"      --keep N           keep only the newest N incidents in DIR (default all)\n"
"      --max-disk SIZE    keep the incidents in DIR under SIZE in all, deleting\n"
"                         the oldest (default: 10% of its filesystem, at most\n"
"                         4G; 0: no limit).  --keep and --max-disk only ever\n"
"                         delete incidents this service wrote there\n"
"      --no-exit-watch    with -- CMD: do not watch CMD's exit with ptrace.\n"
"                         By default its main thread is seized for its exit\n"
"                         event only, so the incident is taken while CMD's\n"
"                         memory exists and its own functions resolve; a CMD\n"
"                         whose process a helper of its own must ptrace\n"
"                         (LeakSanitizer at exit, crash reporters) cannot\n"
"                         then: give this for such a CMD\n"
"  -C, --cpu LIST         record only these CPUs (perf's -C: 0,2-3); the\n"
"                         others are left out of the incident\n"
"  -p, --pid PID[,PID]    keep only these processes' samples and calls (all\n"
"                         their threads); every CPU's scheduling stays, so\n"
"                         what ran instead of them is still seen\n"
"  -j, --jobs N           decode threads (default: number of CPUs)\n"
"  -q, --quiet            print only errors and incident paths\n"
"  -h, --help             this text\n"
"\n"
"Environment: SPTD_PT_CPU=FAMILY/MODEL/STEPPING names the Intel CPU for PT\n"
"decoding where cpuid hides it (a guest with PT passed through).\n"
"\n"
"DUR is a number with ns, us, ms or s (\"10ms\", \"1.5s\"); SIZE takes K, M, G.\n"
"Each incident's path is printed on stdout when it is written.\n"
"\n"
"Exit status: 0 done (--count reached, or stopped by SIGINT/SIGTERM: with\n"
"--on-stop save, once the final incident is written), 1 runtime\n"
"failure, 2 bad command line (an unsafe --output included), 4 not root, 5 this\n"
"machine lacks what was asked (e.g. --source pt without Intel PT), 7 another\n"
"sysptd is running (or writes to the same --output).\n";

/* -p PID[,PID...]: processes that exist now. */
static int parse_pids(const char *text, struct sptd_col_record_opts *o)
{
	const char *p = text;

	while (*p) {
		char *end, path[64];
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 4194304 || (*end && *end != ',')) {
			fprintf(stderr, "sysptd: bad --pid '%s' (process ids, comma-separated)\n", text);
			return -EINVAL;
		}
		if (o->npids == SPTD_MAX_PIDS) {
			fprintf(stderr, "sysptd: at most %d processes for --pid\n", SPTD_MAX_PIDS);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "/proc/%ld", v);
		if (access(path, F_OK) != 0) {
			fprintf(stderr, "sysptd: --pid %ld: no such process\n", v);
			return -ESRCH;
		}
		o->pids[o->npids++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -EINVAL;
}

int sptd_col_record_parse(int argc, char **argv, struct sptd_col_record_opts *o)
{
	static const struct option longopts[] = {
		{ "window", required_argument, NULL, 'w' },
		{ "post", required_argument, NULL, 'P' },
		{ "trigger", required_argument, NULL, 't' },
		{ "source", required_argument, NULL, 's' },
		{ "freq", required_argument, NULL, 'F' },
		{ "buffer", required_argument, NULL, 'b' },
		{ "user-only", no_argument, NULL, 'U' },
		{ "timing", required_argument, NULL, 'T' },
		{ "image-cache", required_argument, NULL, 'I' },
		{ "portable", no_argument, NULL, 'Z' },
		{ "count", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "on-stop", required_argument, NULL, 'S' },
		{ "cooldown", required_argument, NULL, 'L' },
		{ "output", required_argument, NULL, 'o' },
		{ "keep", required_argument, NULL, 'K' },
		{ "max-disk", required_argument, NULL, 'D' },
		{ "unsafe-output", no_argument, NULL, 'X' },
		{ "name", required_argument, NULL, 'N' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "event", required_argument, NULL, 'e' },
		{ "offcpu", no_argument, NULL, 'O' },
		{ "call-graph", required_argument, NULL, 'G' + 256 },
		{ "no-exit-watch", no_argument, NULL, 'W' },
		{ "power", no_argument, NULL, 'P' + 256 },
		{ "pid", required_argument, NULL, 'p' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512];
	size_t off = 0;
	int c, output_given = 0;

	memset(o, 0, sizeof(*o));
	sptd_col_set_service_name(NULL);
	o->window_ns = 10000000;
	o->freq = 1000;   /* BENCHMARKS.md, armed cost: 10 kHz cost 6% over ftrace alone */
	o->timing = SPTD_PT_TIMING_NORMAL;
	o->output = "/var/lib/sysptd";
	o->image_cache = sptd_col_pt_imgcache_default();
	for (int i = 0; i < argc && off < sizeof(o->command); i++)
		off += (size_t)snprintf(o->command + off, sizeof(o->command) - off, "%s%s",
		                        i ? " " : "", argv[i]);
	sptd_col_getopt_start();
	while ((c = getopt_long(argc, argv, "+:w:t:s:F:b:n:o:j:qhC:p:e:", longopts, NULL)) != -1) {
		char *end;
		long v;

		switch (c) {
		case 'w':
		case 'P':
		case 'L': {
			int64_t ns;

			if (sptd_col_parse_duration(optarg, &ns) < 0 || (c == 'w' && ns <= 0)) {
				fprintf(stderr, "sysptd: bad duration '%s' for --%s: " SPTD_DURATION_HELP "\n",
				        optarg, c == 'w' ? "window" : c == 'P' ? "post" : "cooldown");
				return -EINVAL;
			}
			*(c == 'w' ? &o->window_ns : c == 'P' ? &o->post_ns : &o->cooldown_ns) = ns;
			break;
		}
		case 't':
			if (o->ntriggers == SPTD_MAX_TRIGGERS) {
				fprintf(stderr, "sysptd: at most %d --trigger options\n", SPTD_MAX_TRIGGERS);
				return -EINVAL;
			}
			if (sptd_col_parse_trigger(optarg, &o->triggers[o->ntriggers], err, sizeof(err)) < 0) {
				fprintf(stderr, "sysptd: --trigger %s: %s\n", optarg, err);
				return -EINVAL;
			}
			o->ntriggers++;
			break;
		case 's':
			if (strcmp(optarg, "auto") == 0)
				o->source = SPTD_SOURCE_AUTO;
			else if (strcmp(optarg, "sample") == 0)
				o->source = SPTD_SOURCE_SAMPLE;
			else if (strcmp(optarg, "pt") == 0)
				o->source = SPTD_SOURCE_PT;
			else {
				fprintf(stderr, "sysptd: unknown --source '%s' (auto, pt or sample)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'F':
		case 'n':
		case 'K':
		case 'j':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < (c == 'F' ? 1 : 0) ||
			    v > (c == 'F' ? 100000 : 1000000)) {
				fprintf(stderr, "sysptd: bad number '%s' for -%c\n", optarg, c == 'K' ? 'k' : c);
				return -EINVAL;
			}
			*(c == 'F' ? &o->freq : c == 'n' ? &o->count : c == 'K' ? &o->keep : &o->jobs) = (int)v;
			break;
		case '1':
			o->count = 1;
			break;
		case 'S':
			if (strcmp(optarg, "save") == 0)
				o->on_stop = SPTD_ON_STOP_SAVE;
			else if (strcmp(optarg, "discard") == 0)
				o->on_stop = SPTD_ON_STOP_DISCARD;
			else {
				fprintf(stderr, "sysptd: unknown --on-stop '%s' (save or discard)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			if (sptd_col_parse_size(optarg, &o->buffer_bytes) < 0 || o->buffer_bytes < 4096) {
				fprintf(stderr, "sysptd: bad size '%s' for --buffer (use e.g. 4M; at least 4K)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'U':
			o->user_only = 1;
			break;
		case 'T':
			if (sptd_col_pt_timing_parse(optarg, &o->timing) < 0) {
				fprintf(stderr, "sysptd: unknown --timing '%s' (low, normal or high)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'I':
			if (!optarg[0]) {
				fprintf(stderr, "sysptd: --image-cache needs a directory\n");
				return -EINVAL;
			}
			o->image_cache = optarg;
			break;
		case 'O':
			o->offcpu = 1;
			break;
		case 'W':
			o->no_exit_watch = 1;
			break;
		case 'G' + 256:
			if (sptd_col_parse_call_graph(optarg, &o->stack_user) < 0) {
				fprintf(stderr, "sysptd: bad --call-graph '%s' (fp, or dwarf[,SIZE] with "
				        "SIZE a multiple of 8 from 8 to %u)\n", optarg,
				        SPTD_CALL_GRAPH_STACK_MAX);
				return -EINVAL;
			}
			break;
		case 'P' + 256:
			o->power = 1;
			break;
		case 'Z':
			o->portable = 1;
			break;
		case 'o':
			o->output = optarg;
			output_given = 1;
			break;
		case 'X':
			o->unsafe_output = 1;
			break;
		case 'C':
			if (strlen(optarg) >= sizeof(o->cpu_list) || sptd_col_cpus_parse(optarg, NULL, 0) <= 0) {
				fprintf(stderr, "sysptd: bad CPU list '%s' for --cpu (use e.g. 0,2-3)\n", optarg);
				return -EINVAL;
			}
			snprintf(o->cpu_list, sizeof(o->cpu_list), "%s", optarg);
			break;
		case 'e':
			if (o->nevents == SPTD_MAX_EVENTS) {
				fprintf(stderr, "sysptd: at most %d --event options\n", SPTD_MAX_EVENTS);
				return -EINVAL;
			}
			if (sptd_col_parse_event(optarg, &o->events[o->nevents], err, sizeof(err)) < 0) {
				fprintf(stderr, "sysptd: --event %s: %s\n", optarg, err);
				return -EINVAL;
			}
			o->nevents++;
			break;
		case 'p':
			if (parse_pids(optarg, o) < 0)
				return -EINVAL;
			break;
		case 'N':
			if (sptd_col_set_service_name(optarg) < 0) {
				fprintf(stderr, "sysptd: bad --name '%s': 1 to %d letters, digits, '.', '_' "
				        "or '-', not starting with '-' or '.'\n", optarg, SPTD_NAME_MAX);
				return -EINVAL;
			}
			o->name = optarg;
			break;
		case 'D':
			if (sptd_col_parse_size(optarg, &o->max_disk) < 0) {
				fprintf(stderr, "sysptd: bad size '%s' for --max-disk (use e.g. 2G, 500M; "
				        "0 for no limit)\n", optarg);
				return -EINVAL;
			}
			o->max_disk_set = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 1;
		case ':':
			fprintf(stderr, "sysptd: option '%s' needs a value (see sysptd --help)\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "sysptd: unknown option '%s' (see sysptd --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		/* `-- CMD`: getopt stopped at "--" (skipped) */
		if (strcmp(argv[optind - 1], "--") != 0) {
			fprintf(stderr, "sysptd: unexpected argument '%s' (see sysptd --help; a command "
			        "to run goes after --)\n", argv[optind]);
			return -EINVAL;
		}
		o->cmd_argv = argv + optind;
	} else if (optind > 0 && optind <= argc && strcmp(argv[optind - 1], "--") == 0) {
		fprintf(stderr, "sysptd: -- needs a command to run after it\n");
		return -EINVAL;
	}
	if (o->name && !output_given) {
		snprintf(o->output_buf, sizeof(o->output_buf), "%s/%s", SPTD_COL_DEFAULT_DIR, o->name);
		o->output = o->output_buf;
		o->output_named_default = 1;
	}
	return 0;
}

int sptd_col_cmd_record(int argc, char **argv)
{
	struct sptd_col_record_opts o;
	int ret = sptd_col_record_parse(argc, argv, &o);

	if (ret)
		return ret > 0 ? SPTD_EXIT_OK : SPTD_EXIT_USAGE;
	return sptd_col_record_run(&o);
}
