/* cmd_import.c — `sysptd import`: a perf.data recording (perf record -e
 * intel_pt//, --switch-events, -e sched:sched_switch; see perfdata_*.c), or
 * raw Intel PT recorded elsewhere (--pt: one file per CPU), its code images
 * and optionally a sched_switch list, written as a new incident and decoded.
 *
 * Images: FILE@ADDR (a flat image or memory dump, ELF or not) is embedded
 * as raw_image bytes placed at ADDR, so the incident is self-contained; an
 * ELF file without @ADDR is referenced by path (dso + raw_mmap, bias 0) and
 * loaded by its program headers at decode time, so its symbols name the
 * functions.  FILE@ADDR:PID places the image in the address space of
 * process PID only (two static programs share addresses): it becomes a
 * dso + raw_mmap row of that pid, read at decode time (raw_image has no pid).
 * --maps names each process's ELF mappings (code and symbols from the file,
 * as a live capture records them) and --tasks which thread is in which
 * process, so that each task decodes in its own address space. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "perfdata-local.h"
#include "sptd_col.h"
#include "sptd_dec.h"
#include "sptd_sched.h"
#include "sptd_store.h"

#define IMPORT_MAX 256
#define PT_CHUNK (1u << 20)

struct import_opts {
	const char *pt[IMPORT_MAX];      /* per CPU, in CPU order */
	int npt;
	const char *image[IMPORT_MAX];   /* FILE[@ADDR] as given */
	int nimage;
	int family, model, stepping;
	int mtc_freq, nom_freq;
	int64_t cpuid15_eax, cpuid15_ebx;
	int64_t tsc_hz;
	const char *sched;
	const char *maps;                /* PID START END PGOFF PATH per line */
	const char *tasks;               /* PID TID [0xCR3] COMM per line */
	const char *out;
	int jobs;
};

static void log_stderr(void *ctx, int level, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "sysptd import: %s%s\n", level <= LOG_ERR ? "error: " :
	        level == LOG_WARNING ? "warning: " : "", msg);
}

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: sysptd import PERF.DATA [-o INCIDENT] [--symfs DIR] [--kcore DIR] [-j N]\n"
	"       sysptd import --pt FILE[,FILE...] --image FILE[@ADDR] ... -o INCIDENT\n"
	"                     [--cpu-id F/M/S] [--mtc-freq N] [--nom-freq N]\n"
	"                     [--cpuid15 EAX/EBX] [--tsc-hz N] [--sched FILE]\n"
	"                     [--maps FILE] [--tasks FILE] [-j N]\n\n"
	"Write a decoded incident from a perf.data recording (Intel PT, context\n"
	"switches, sched:sched_switch samples) or from raw Intel PT recorded elsewhere.\n\n"
	"perf.data mode:\n"
	"  --symfs DIR          look for recorded files under DIR first (as perf --symfs)\n"
	"  --kcore DIR          kernel code from a perf record --kcore directory\n"
	"                       (DIR/kcore); default PERF.DATA/kcore_dir when it exists\n"
	"  --debug-dir DIR      build-id cache (default ~/.debug)\n"
	"  -o FILE              default: ./BASENAME.incident\n\n"
	"--pt mode:\n"
	"  --pt FILE[,FILE...]  raw PT, one file per CPU in CPU order (repeatable)\n"
	"  --image FILE[@ADDR[:PID]]\n"
	"                       code that ran: an ELF file without @ADDR is loaded by its\n"
	"                       program headers; a flat image, or an ELF with @ADDR, is\n"
	"                       placed at ADDR (repeatable); with :PID only process PID\n"
	"                       sees it (an ELF memory image, e.g. the vdso, then also\n"
	"                       names its functions)\n"
	"  --maps FILE          executable mappings per process, one per line:\n"
	"                       PID 0xSTART 0xEND 0xPGOFF PATH; an ELF PATH gives that\n"
	"                       process's code and symbols ([vdso] etc. are skipped: give\n"
	"                       their bytes with --image FILE@ADDR:PID)\n"
	"  --tasks FILE         threads, one per line: PID TID [0xCR3] COMM\n"
	"  --cpu-id F/M/S       CPU family/model/stepping of the recording machine\n"
	"                       (selects libipt's errata workarounds)\n"
	"  --mtc-freq N, --nom-freq N, --cpuid15 EAX/EBX\n"
	"                       timing configuration of the recording (MTC period,\n"
	"                       nominal ratio, CPUID 0x15 TSC/crystal ratio)\n"
	"  --tsc-hz N           TSC frequency: times become ns (default: TSC ticks; a\n"
	"                       trace without timing packets keeps order only)\n"
	"  --sched FILE         context switches, one per line:\n"
	"                       TS_NS CPU PREV_TID NEXT_TID NEXT_COMM  ('#' comments)\n"
	"  -j, --jobs N         decode threads (default: number of cores)\n"
	"  -o, --output FILE    the incident to write (must not exist)\n");
}

static int parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno || end == text || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct import_opts *o)
{
	static const struct option longopts[] = {
		{ "pt", required_argument, NULL, 'p' },
		{ "image", required_argument, NULL, 'i' },
		{ "cpu-id", required_argument, NULL, 'c' },
		{ "mtc-freq", required_argument, NULL, 'm' },
		{ "nom-freq", required_argument, NULL, 'n' },
		{ "cpuid15", required_argument, NULL, 'r' },
		{ "tsc-hz", required_argument, NULL, 't' },
		{ "sched", required_argument, NULL, 's' },
		{ "maps", required_argument, NULL, 'M' },
		{ "tasks", required_argument, NULL, 'T' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	int64_t v;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *list = optarg, *tok, *save = NULL;

			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->npt == IMPORT_MAX) {
					fprintf(stderr, "sysptd import: at most %d PT files\n", IMPORT_MAX);
					return -EINVAL;
				}
				o->pt[o->npt++] = tok;
			}
			break;
		}
		case 'i':
			if (o->nimage == IMPORT_MAX) {
				fprintf(stderr, "sysptd import: at most %d images\n", IMPORT_MAX);
				return -EINVAL;
			}
			o->image[o->nimage++] = optarg;
			break;
		case 'c':
			if (sscanf(optarg, "%d/%d/%d", &o->family, &o->model, &o->stepping) != 3 ||
			    o->family <= 0 || o->family > 255 || o->model < 0 || o->model > 255 ||
			    o->stepping < 0 || o->stepping > 255) {
				fprintf(stderr, "sysptd import: bad --cpu-id '%s': want FAMILY/MODEL/STEPPING, e.g. 6/85/4\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm':
		case 'n':
			if (parse_int(optarg, 0, c == 'm' ? 15 : 255, &v) < 0) {
				fprintf(stderr, "sysptd import: bad --%s '%s'\n",
				        c == 'm' ? "mtc-freq (0..15)" : "nom-freq (0..255)", optarg);
				return -EINVAL;
			}
			*(c == 'm' ? &o->mtc_freq : &o->nom_freq) = (int)v;
			break;
		case 'r': {
			unsigned long long a, b;

			if (sscanf(optarg, "%llu/%llu", &a, &b) != 2 || a > UINT32_MAX || b > UINT32_MAX) {
				fprintf(stderr, "sysptd import: bad --cpuid15 '%s': want EAX/EBX\n", optarg);
				return -EINVAL;
			}
			o->cpuid15_eax = (int64_t)a;
			o->cpuid15_ebx = (int64_t)b;
			break;
		}
		case 't':
			if (parse_int(optarg, 1, INT64_MAX, &o->tsc_hz) < 0) {
				fprintf(stderr, "sysptd import: bad --tsc-hz '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 's':
			o->sched = optarg;
			break;
		case 'M':
			o->maps = optarg;
			break;
		case 'T':
			o->tasks = optarg;
			break;
		case 'j':
			if (parse_int(optarg, 0, 1024, &v) < 0) {
				fprintf(stderr, "sysptd import: bad -j '%s'\n", optarg);
				return -EINVAL;
			}
			o->jobs = (int)v;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "sysptd import: option '%s' needs a value\n", argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "sysptd import: unknown option '%s' (see sysptd import --help)\n",
			        argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sysptd import: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->npt || !o->out) {
		fprintf(stderr, "sysptd import: need --pt FILE and -o INCIDENT (see sysptd import --help)\n");
		return -EINVAL;
	}
	return 0;
}

/* ---- writing the raw tables ------------------------------------------------ */

static int store_pt(struct sptd_store *st, int cpu, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(PT_CHUNK);
	int seq = 0, ret = 0;
	size_t n;

	if (!f || !buf) {
		ret = !f ? -errno : -ENOMEM;
		goto out;
	}
	while ((n = fread(buf, 1, PT_CHUNK, f)) > 0 && ret >= 0)
		ret = sptd_store_raw_pt_add(st, cpu, seq++, buf, n);
	if (ret >= 0 && ferror(f))
		ret = -EIO;
out:
	if (f)
		fclose(f);
	free(buf);
	return ret;
}

/* Lowest and highest address of the PT_LOAD segments of an ELF; 1 if
 * @path is ELF, 0 if not, -errno on a read failure. */
static int elf_span(const char *path, uint64_t *lo, uint64_t *hi)
{
	Elf *elf = NULL;
	size_t n, i;
	int fd, ret = 0;

	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		GElf_Phdr p;

		if (!gelf_getphdr(elf, (int)i, &p) || p.p_type != PT_LOAD)
			continue;
		if (p.p_vaddr < *lo)
			*lo = p.p_vaddr;
		if (p.p_vaddr + p.p_memsz > *hi)
			*hi = p.p_vaddr + p.p_memsz;
	}
	ret = *lo != UINT64_MAX;
out:
	elf_end(elf);
	close(fd);
	return ret;
}

/* FILE@ADDR:PID: a dso + raw_mmap row of @pid, the file read at decode time
 * (derive_pt: an ELF memory image by its program headers, else flat).  The
 * bias maps the image's own addresses to @addr: the file offset for a flat
 * image, the lowest PT_LOAD vaddr for an ELF one. */
static int store_pid_image(struct sptd_store *st, int64_t dso_id, const char *path,
                           uint64_t addr, int pid)
{
	struct stat sb;
	uint64_t lo, hi;
	int is_elf;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "sysptd import: --image %s: %s\n", path, strerror(errno));
		return -ENOENT;
	}
	if (sb.st_size <= 0) {
		fprintf(stderr, "sysptd import: --image %s is empty\n", path);
		return -EINVAL;
	}
	is_elf = elf_span(path, &lo, &hi);
	if (is_elf < 0) {
		fprintf(stderr, "sysptd import: --image %s: %s\n", path, strerror(-is_elf));
		return is_elf;
	}
	if (!is_elf)
		lo = 0;
	return sptd_store_raw_mmap_add(st, pid, addr, addr + (uint64_t)sb.st_size, 0, dso_id,
	                               (int64_t)(addr - lo));
}

static int store_image(struct sptd_store *st, int64_t dso_id, const char *spec)
{
	char path[PATH_MAX], real[PATH_MAX];
	const char *at = strrchr(spec, '@');
	uint64_t addr = 0, lo, hi;
	int has_addr = 0, is_elf, ret, pid = -1;

	if (at) {
		char *end;
		int64_t v;

		snprintf(path, sizeof(path), "%.*s", (int)(at - spec), spec);
		errno = 0;
		addr = strtoull(at + 1, &end, 16);
		if (errno || end == at + 1 || (*end && *end != ':') ||
		    (*end == ':' && parse_int(end + 1, 0, INT_MAX, &v) < 0)) {
			fprintf(stderr, "sysptd import: bad address in --image '%s' "
			        "(hex, e.g. @0x400000, optionally :PID)\n", spec);
			return -EINVAL;
		}
		if (*end == ':')
			pid = (int)v;
		has_addr = 1;
	} else {
		snprintf(path, sizeof(path), "%s", spec);
	}
	if (!realpath(path, real)) {
		fprintf(stderr, "sysptd import: --image %s: %s\n", path, strerror(errno));
		return -errno;
	}
	is_elf = has_addr ? 0 : elf_span(real, &lo, &hi);
	if (is_elf < 0) {
		fprintf(stderr, "sysptd import: --image %s: %s\n", real, strerror(-is_elf));
		return is_elf;
	}
	if (!has_addr && !is_elf) {
		fprintf(stderr, "sysptd import: --image %s is not ELF: give its address as FILE@ADDR\n", real);
		return -EINVAL;
	}
	ret = sptd_store_dso_add(st, dso_id, real, NULL);
	if (ret < 0)
		return ret;
	if (is_elf)
		return sptd_store_raw_mmap_add(st, -1, lo, hi, 0, dso_id, 0);
	if (pid >= 0)
		return store_pid_image(st, dso_id, real, addr, pid);
	{
		FILE *f = fopen(real, "rb");
		uint8_t *buf = NULL;
		long size;

		if (!f)
			return -errno;
		ret = -EIO;
		if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
			buf = malloc((size_t)size);
			ret = !buf ? -ENOMEM :
			      fread(buf, 1, (size_t)size, f) == (size_t)size ? 0 : -EIO;
			if (ret == 0)
				ret = sptd_store_raw_image_add(st, dso_id, addr, buf, (size_t)size);
			if (ret == 0)
				ret = sptd_store_raw_mmap_add(st, -1, addr, addr + (uint64_t)size, 0,
				                              dso_id, (int64_t)addr);
		}
		free(buf);
		fclose(f);
	}
	return ret;
}

/* A list file of --maps, --tasks or --sched: @fn gets each line that is not
 * blank or a '#' comment, leading blanks skipped, with its number for
 * messages.  The first error ends the walk and is returned. */
typedef int (*line_fn)(void *ctx, const char *path, int lineno, char *line);

static int for_each_line(const char *option, const char *path, line_fn fn, void *ctx)
{
	FILE *f = fopen(path, "r");
	char line[PATH_MAX + 128];
	int lineno = 0, ret = 0;

	if (!f) {
		ret = -errno;
		fprintf(stderr, "sysptd import: %s %s: %s\n", option, path, strerror(errno));
		return ret;
	}
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		char *p = line;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		ret = fn(ctx, path, lineno, p);
	}
	fclose(f);
	return ret;
}

/* --maps: "PID 0xSTART 0xEND 0xPGOFF PATH" per line.  Every ELF file
 * becomes one dso (ids from *next_dso on), every line a raw_mmap row with
 * the bias its program headers give for PGOFF.  Paths that are not files
 * ("[vdso]", "[anon]") are skipped: their bytes come from --image. */
struct maps_ctx {
	struct sptd_store *st;
	int64_t *next_dso;          /* next free dso id */
	char (*paths)[PATH_MAX];    /* files given a dso row so far */
	int64_t *ids;               /* their dso ids */
	size_t n;
};

static int maps_line(void *arg, const char *path, int lineno, char *line)
{
	struct maps_ctx *m = arg;
	unsigned long long start, end, pgoff;
	struct sptd_dec_symfile *sf = NULL;
	char file[PATH_MAX], real[PATH_MAX];
	int64_t bias = 0;
	size_t i;
	int pid, ret;

	if (sscanf(line, "%d %llx %llx %llx %4095s", &pid, &start, &end, &pgoff, file) != 5 ||
	    pid < 0 || end <= start) {
		fprintf(stderr, "sysptd import: %s:%d: want PID 0xSTART 0xEND 0xPGOFF PATH\n",
		        path, lineno);
		return -EINVAL;
	}
	if (file[0] == '[')
		return 0;
	if (!realpath(file, real)) {
		fprintf(stderr, "sysptd import: %s:%d: %s: %s\n", path, lineno, file, strerror(errno));
		return -ENOENT;
	}
	ret = sptd_dec_symfile_load_elf(real, &sf);
	if (ret >= 0)
		ret = sptd_dec_symfile_bias(sf, start, pgoff, &bias);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0) {
		fprintf(stderr, "sysptd import: %s:%d: %s: %s\n", path, lineno, real,
		        ret == -ENOENT ? "no program header maps that offset" :
		        ret == -EBADMSG ? "not an ELF file" : strerror(-ret));
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	for (i = 0; i < m->n && strcmp(m->paths[i], real) != 0; i++)
		;
	if (i == m->n) {
		char (*np)[PATH_MAX] = realloc(m->paths, (m->n + 1) * sizeof(*np));
		int64_t *ni = np ? realloc(m->ids, (m->n + 1) * sizeof(*ni)) : NULL;

		if (np)
			m->paths = np;
		if (!ni)
			return -ENOMEM;
		m->ids = ni;
		snprintf(m->paths[m->n], PATH_MAX, "%s", real);
		m->ids[m->n] = (*m->next_dso)++;
		ret = sptd_store_dso_add(m->st, m->ids[m->n], real, NULL);
		m->n++;
		if (ret < 0)
			return ret;
	}
	return sptd_store_raw_mmap_add(m->st, pid, start, end, pgoff, m->ids[i], bias);
}

static int store_maps(struct sptd_store *st, const char *path, int64_t *next_dso)
{
	struct maps_ctx m = { .st = st, .next_dso = next_dso };
	int ret = for_each_line("--maps", path, maps_line, &m);

	free(m.paths);
	free(m.ids);
	return ret;
}

/* --tasks: "PID TID [0xCR3] COMM" per line. */
static int tasks_line(void *st, const char *path, int lineno, char *line)
{
	char a[64] = "", b[64] = "";
	int pid, tid, k = sscanf(line, "%d %d %63s %63s", &pid, &tid, a, b);

	if (k < 2 || pid < 0 || tid < 0) {
		fprintf(stderr, "sysptd import: %s:%d: want PID TID [0xCR3] COMM\n", path, lineno);
		return -EINVAL;
	}
	/* a CR3 column is recognised by its 0x; the comm follows it */
	return sptd_store_raw_task_add(st, pid, tid,
	                               k == 4 && strncmp(a, "0x", 2) == 0 ? b : a, NULL);
}

/* --sched: "TS_NS CPU PREV_TID NEXT_TID NEXT_COMM" per line. */
static int sched_line(void *st, const char *path, int lineno, char *line)
{
	long long ts;
	int cpu, prev, next, used = 0;
	char comm[64] = "";

	if (sscanf(line, "%lld %d %d %d %n", &ts, &cpu, &prev, &next, &used) < 4 ||
	    cpu < 0 || prev < 0 || next < 0) {
		fprintf(stderr, "sysptd import: %s:%d: want TS_NS CPU PREV_TID NEXT_TID NEXT_COMM\n",
		        path, lineno);
		return -EINVAL;
	}
	if (used)
		sscanf(line + used, "%63s", comm);
	return sptd_store_raw_switch_add(st, ts, cpu, prev, next, comm);
}

static int store_meta(struct sptd_store *st, const struct import_opts *o, int argc,
                      char **argv)
{
	char cmd[2048] = "";
	size_t len = 0;
	int i, ret;

	for (i = 0; i < argc && len + 1 < sizeof(cmd); i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s", i ? " " : "", argv[i]);
	ret = sptd_store_meta_set(st, "source", "pt");
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "clock", "tsc");
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "command", cmd);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "cpus", o->npt);
	if (ret >= 0 && o->family) {
		ret = sptd_store_meta_set_int(st, "pt_cpu_family", o->family);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "pt_cpu_model", o->model);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "pt_cpu_stepping", o->stepping);
	}
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_mtc_freq", o->mtc_freq);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_nom_freq", o->nom_freq);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_cpuid15_eax", o->cpuid15_eax);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_cpuid15_ebx", o->cpuid15_ebx);
	if (ret >= 0 && o->tsc_hz) {
		ret = sptd_store_meta_set_int(st, "pt_tsc_hz", o->tsc_hz);
	}
	return ret;
}

/* Per CPU: instructions, calls, returns, far calls, gaps. */
static void print_summary(struct sptd_store *st, const char *out)
{
	static const char *const names[] = { "instructions", "calls", "returns",
	                                     "far_calls", "decode_errors", "gaps" };
	struct sptd_store_stmt *stmt = NULL;
	int64_t slices = 0;
	int cpu, last = -1;

	sptd_store_query_int(st, "SELECT count(*) FROM slice", &slices);
	printf("%s: %" PRId64 " call slices\n", out, slices);
	if (sptd_store_prepare(st, "SELECT cpu, name, value FROM stats WHERE cpu IS NOT NULL "
	                       "ORDER BY cpu", &stmt) < 0)
		return;
	while (sptd_store_step(stmt) == 1) {
		const char *name = sptd_store_column_text(stmt, 1);
		size_t i;

		cpu = (int)sptd_store_column_int(stmt, 0);
		for (i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
			if (strcmp(name, names[i]) != 0)
				continue;
			if (cpu != last)
				printf("%scpu %d:", last >= 0 ? "\n" : "", cpu);
			last = cpu;
			printf(" %s %" PRId64, names[i], sptd_store_column_int(stmt, 2));
		}
	}
	if (last >= 0)
		printf("\n");
	sptd_store_finalize(stmt);
}

/* ---- perf.data mode --------------------------------------------------------- */

/* 1 when the command line is the perf.data form (no --pt). */
static int perfdata_mode(int argc, char **argv)
{
	int i, positional = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--pt") == 0 || strncmp(argv[i], "--pt=", 5) == 0)
			return 0;
		if (argv[i][0] != '-')
			positional = 1;
	}
	return positional;
}

static int import_perfdata(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "symfs", required_argument, NULL, 'S' },
		{ "kcore", required_argument, NULL, 'K' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sptd_col_pd_import_opts o;
	struct sptd_col_pd_import_result res;
	char out[PATH_MAX], kcore[PATH_MAX], cmd[2048] = "", err[1024];
	size_t len = 0;
	int c, i, ret;
	int64_t v;

	memset(&o, 0, sizeof(o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o.paths.symfs = optarg;
			break;
		case 'K':
			o.paths.kcore = optarg;
			break;
		case 'D':
			o.paths.debug_dir = optarg;
			break;
		case 'j':
			if (parse_int(optarg, 0, 1024, &v) < 0) {
				fprintf(stderr, "sysptd import: bad -j '%s'\n", optarg);
				return SPTD_EXIT_USAGE;
			}
			o.jobs = (int)v;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'h':
			usage(stdout);
			return SPTD_EXIT_OK;
		case ':':
			fprintf(stderr, "sysptd import: option '%s' needs a value\n", argv[optind - 1]);
			return SPTD_EXIT_USAGE;
		default:
			fprintf(stderr, "sysptd import: unknown option '%s' (see sysptd import --help)\n",
			        argv[optind - 1]);
			return SPTD_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "sysptd import: want exactly one perf.data file (see sysptd import --help)\n");
		return SPTD_EXIT_USAGE;
	}
	o.input = argv[optind];
	if (!o.output) {
		const char *base = strrchr(o.input, '/') ? strrchr(o.input, '/') + 1 : o.input;

		snprintf(out, sizeof(out), "%s.incident", base[0] ? base : "perf.data");
		o.output = out;
	}
	if (!o.paths.kcore) {
		struct stat sb;

		/* perf record --kcore writes a directory: DIR/data + DIR/kcore_dir */
		snprintf(kcore, sizeof(kcore), "%s/kcore_dir", o.input);
		if (stat(kcore, &sb) == 0 && S_ISDIR(sb.st_mode))
			o.paths.kcore = kcore;
	}
	for (i = 0; i < argc && len + 1 < sizeof(cmd); i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s", i ? " " : "", argv[i]);
	o.command = cmd;
	sptd_col_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	ret = sptd_col_perfdata_import(&o, &res, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "sysptd import: %s\n", err[0] ? err : strerror(-ret));
		switch (ret) {
		case -EBADMSG: case -ENOTSUP: case -ENOENT: case -ENODATA: case -EACCES:
		case -EISDIR:
			return SPTD_EXIT_BADFILE;
		case -EINVAL:
			return SPTD_EXIT_USAGE;
		default:
			return SPTD_EXIT_FAIL;
		}
	}
	if (res.images_missing)
		fprintf(stderr, "sysptd import: warning: the code of %" PRId64 " mapping(s) was not "
		        "found (try --symfs DIR or --kcore DIR): it shows as gaps\n",
		        res.images_missing);
	{
		struct sptd_store *st = NULL;

		if (sptd_store_open(o.output, 0, &st) == 0) {
			int64_t sched = 0;

			sptd_store_query_int(st, "SELECT count(*) FROM sched_slice", &sched);
			printf("%s: %" PRId64 " records, %" PRId64 " PT bytes, %" PRId64
			       " context switches, %" PRId64 " sched slices\n", o.output, res.records,
			       res.aux_bytes, res.switches, sched);
			if (res.has_pt)
				print_summary(st, o.output);
		}
		sptd_store_destroy(st);
	}
	return SPTD_EXIT_OK;
}

int sptd_col_cmd_import(int argc, char **argv)
{
	struct import_opts o;
	struct sptd_store *st = NULL;
	int ret, i;

	if (perfdata_mode(argc, argv))
		return import_perfdata(argc, argv);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret > 0 ? SPTD_EXIT_OK : SPTD_EXIT_USAGE;
	sptd_col_set_log(log_stderr, NULL);
	sptd_dec_set_log(log_stderr, NULL);
	sptd_sched_set_log(log_stderr, NULL);
	for (i = 0; i < o.npt; i++) {
		if (access(o.pt[i], R_OK) != 0) {
			fprintf(stderr, "sysptd import: --pt %s: %s\n", o.pt[i], strerror(errno));
			return SPTD_EXIT_BADFILE;
		}
	}
	ret = sptd_store_create(o.out, &st);
	if (ret < 0) {
		fprintf(stderr, "sysptd import: cannot create %s: %s\n", o.out,
		        ret == -EEXIST ? "it already exists" : st ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}
	ret = store_meta(st, &o, argc, argv);
	for (i = 0; i < o.npt && ret >= 0; i++)
		ret = store_pt(st, i, o.pt[i]);
	for (i = 0; i < o.nimage && ret >= 0; i++)
		ret = store_image(st, i + 1, o.image[i]);
	if (ret >= 0 && o.maps) {
		int64_t next_dso = o.nimage + 1;

		ret = store_maps(st, o.maps, &next_dso);
	}
	if (ret >= 0 && o.tasks)
		ret = for_each_line("--tasks", o.tasks, tasks_line, st);
	if (ret >= 0 && o.sched)
		ret = for_each_line("--sched", o.sched, sched_line, st);
	if (ret == -EINVAL || ret == -ENOENT) {
		sptd_store_destroy(st);
		return ret == -EINVAL ? SPTD_EXIT_USAGE : SPTD_EXIT_BADFILE;
	}
	if (ret >= 0)
		ret = sptd_col_derive_all(st, o.jobs);
	if (ret >= 0)
		print_summary(st, o.out);
	if (ret >= 0)
		ret = sptd_store_commit(st);
	if (ret < 0) {
		fprintf(stderr, "sysptd import: %s: %s\n", o.out,
		        sptd_store_errmsg(st)[0] ? sptd_store_errmsg(st) : strerror(-ret));
		sptd_store_destroy(st);
		return SPTD_EXIT_FAIL;
	}
	sptd_store_destroy(st);
	return SPTD_EXIT_OK;
}
