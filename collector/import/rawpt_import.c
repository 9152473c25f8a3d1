/* rawpt_import.c — raw Intel PT recorded elsewhere (one file per CPU), its
 * code images, and optionally process maps, tasks and a sched_switch list,
 * written into the raw tables of a new incident.
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
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "import-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"

#define PT_CHUNK (1u << 20)

/* ---- writing the raw tables ------------------------------------------------ */

/* A file the caller named, opened as every user file is (no FIFO or
 * device: sptd_dec_file_open), as a stdio stream; NULL with errno set. */
static FILE *open_input(const char *path)
{
	int fd = sptd_dec_file_open(path, SPTD_DEC_OPEN_ANY_SIZE, NULL);
	FILE *f;

	if (fd < 0) {
		errno = fd == -ENXIO ? EINVAL : -fd;
		return NULL;
	}
	f = fdopen(fd, "rb");
	if (!f)
		close(fd);
	return f;
}

/* Said after "Permission denied" on a file only root could read. */
#define NOT_ROOT " (import reads --image, --maps, --tasks and --sched files as the " \
	"user who ran sudo, else as nobody, never as root: put them where that user may read)"

/* Log why input @path of @option could not be opened (errno as
 * open_input left it); the error to return: a FIFO, device or directory
 * is a bad input file (-EBADMSG, exit 6), not a bad command line. */
static int open_failed(const char *option, const char *path)
{
	int e = errno;

	if (e == EINVAL || e == EISDIR) {
		sptd_col_log(LOG_ERR, "%s %s: not a regular file", option, path);
		return -EBADMSG;
	}
	sptd_col_log(LOG_ERR, "%s %s: %s%s", option, path, strerror(e), e == EACCES ? NOT_ROOT : "");
	return -e;
}

static int store_pt(struct sptd_store *st, int cpu, const char *path)
{
	FILE *f = open_input(path);
	uint8_t *buf = malloc(PT_CHUNK);
	int seq = 0, ret = 0;
	size_t n;

	if (!f || !buf) {
		ret = !f ? open_failed("--pt", path) : -ENOMEM;
		goto out;
	}
	while ((n = fread(buf, 1, PT_CHUNK, f)) > 0 && ret >= 0)
		ret = SPTD_STORE_ADD(st, raw_pt, cpu, seq++, buf, n);
	if (ret >= 0 && ferror(f)) {
		sptd_col_log(LOG_ERR, "--pt %s: %s", path, strerror(errno));
		ret = -EBADMSG;
	}
out:
	if (f)
		fclose(f);
	free(buf);
	return ret;
}

/* Lowest and highest address of the PT_LOAD segments of an ELF (decode/
 * reads it); 1 if @path is ELF, 0 if not, else an error logged: -ENOENT,
 * -EACCES, -ENOMEM, or -EBADMSG a file no image can come from (not a
 * regular file, a segment past 2^64, no byte in any PT_LOAD). */
static int elf_span(const char *path, uint64_t *lo, uint64_t *hi)
{
	int ret = sptd_dec_elf_span(path, lo, hi);

	if (ret == -EBADMSG)
		return 0;
	if (ret == -ENXIO || ret == -EISDIR) {
		sptd_col_log(LOG_ERR, "--image %s: not a regular file", path);
		return -EBADMSG;
	}
	if (ret == -ERANGE) {
		sptd_col_log(LOG_ERR, "--image %s: a PT_LOAD segment ends past the top of the "
		             "address space", path);
		return -EBADMSG;
	}
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "--image %s: %s%s", path, strerror(-ret),
		             ret == -EACCES ? NOT_ROOT : "");
		return ret == -ENOENT || ret == -EACCES || ret == -ENOMEM ? ret : -EBADMSG;
	}
	if (*hi <= *lo) {
		sptd_col_log(LOG_ERR, "--image %s: its PT_LOAD segments hold no byte", path);
		return -EBADMSG;
	}
	return 1;
}

/* Is [@addr, @addr + @size) inside the address space?  Logged if not. */
static int fits(const char *path, uint64_t addr, uint64_t size)
{
	if (size && addr <= UINT64_MAX - size)
		return 1;
	sptd_col_log(LOG_ERR, "--image %s@0x%" PRIx64 ": %s", path, addr,
	             size ? "the image would end past the top of the address space"
	                  : "the file is empty");
	return 0;
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
		sptd_col_log(LOG_ERR, "--image %s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (sb.st_size <= 0) {
		sptd_col_log(LOG_ERR, "--image %s is empty", path);
		return -EBADMSG;
	}
	is_elf = elf_span(path, &lo, &hi);
	if (is_elf < 0)
		return is_elf;
	if (!is_elf)
		lo = 0;
	if (!fits(path, addr, (uint64_t)sb.st_size))
		return -EBADMSG;
	return SPTD_STORE_ADD(st, raw_mmap, pid, addr, addr + (uint64_t)sb.st_size, 0, dso_id,
	                      (int64_t)(addr - lo), 0);
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
		    (*end == ':' && sptd_col_parse_int(end + 1, 0, INT_MAX, &v) < 0)) {
			sptd_col_log(LOG_ERR, "bad address in --image '%s' "
			        "(hex, e.g. @0x400000, optionally :PID)", spec);
			return -EINVAL;
		}
		if (*end == ':')
			pid = (int)v;
		has_addr = 1;
	} else {
		snprintf(path, sizeof(path), "%s", spec);
	}
	if (!realpath(path, real))
		return open_failed("--image", path);
	is_elf = has_addr ? 0 : elf_span(real, &lo, &hi);
	if (is_elf < 0)
		return is_elf;
	if (!has_addr && !is_elf) {
		sptd_col_log(LOG_ERR, "--image %s is not ELF: give its address as FILE@ADDR", real);
		return -EINVAL;
	}
	ret = SPTD_STORE_ADD(st, dso, dso_id, real, NULL);
	if (ret < 0)
		return ret;
	if (is_elf)
		return SPTD_STORE_ADD(st, raw_mmap, -1, lo, hi, 0, dso_id, 0, 0);
	if (pid >= 0)
		return store_pid_image(st, dso_id, real, addr, pid);
	{
		FILE *f = open_input(real);
		uint8_t *buf = NULL;
		long size;

		if (!f)
			return open_failed("--image", real);
		ret = -EBADMSG;
		if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
			sptd_col_log(LOG_ERR, "--image %s: %s", real, strerror(errno));
		else if (fits(real, addr, (uint64_t)size)) {
			buf = malloc((size_t)size);
			ret = !buf ? -ENOMEM :
			      fread(buf, 1, (size_t)size, f) == (size_t)size ? 0 : -EBADMSG;
			if (ret == -EBADMSG)
				sptd_col_log(LOG_ERR, "--image %s: shorter than its size", real);
			if (ret == 0)
				ret = SPTD_STORE_ADD(st, raw_image, dso_id, addr, buf, (size_t)size, NULL);
			if (ret == 0)
				ret = SPTD_STORE_ADD(st, raw_mmap, -1, addr, addr + (uint64_t)size, 0,
				                     dso_id, (int64_t)addr, 0);
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
	FILE *f = open_input(path);
	char line[PATH_MAX + 128];
	int lineno = 0, ret = 0;

	if (!f)
		return open_failed(option, path);
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
		sptd_col_log(LOG_ERR, "%s:%d: want PID 0xSTART 0xEND 0xPGOFF PATH",
		        path, lineno);
		return -EBADMSG;
	}
	if (file[0] == '[')
		return 0;
	if (!realpath(file, real)) {
		int e = errno;

		sptd_col_log(LOG_ERR, "%s:%d: %s: %s%s", path, lineno, file, strerror(e),
		             e == EACCES ? NOT_ROOT : "");
		return e == EACCES ? -EACCES : -ENOENT;
	}
	ret = sptd_dec_symfile_load_elf(real, &sf);
	if (ret >= 0)
		ret = sptd_dec_symfile_bias(sf, start, pgoff, &bias);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0) {
		sptd_col_log(LOG_ERR, "%s:%d: %s: %s", path, lineno, real,
		        ret == -ENOENT ? "no program header maps that offset" :
		        ret == -EBADMSG ? "not an ELF file" : strerror(-ret));
		return ret == -ENOMEM ? ret : -EBADMSG;
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
		ret = SPTD_STORE_ADD(m->st, dso, m->ids[m->n], real, NULL);
		m->n++;
		if (ret < 0)
			return ret;
	}
	return SPTD_STORE_ADD(m->st, raw_mmap, pid, start, end, pgoff, m->ids[i], bias, 0);
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
		sptd_col_log(LOG_ERR, "%s:%d: want PID TID [0xCR3] COMM", path, lineno);
		return -EBADMSG;
	}
	/* a CR3 column is recognised by its 0x; the comm follows it */
	return SPTD_STORE_ADD(st, raw_task, pid, tid,
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
		sptd_col_log(LOG_ERR, "%s:%d: want TS_NS CPU PREV_TID NEXT_TID NEXT_COMM",
		        path, lineno);
		return -EBADMSG;
	}
	if (used)
		sscanf(line + used, "%63s", comm);
	return SPTD_STORE_ADD(st, raw_switch, ts, cpu, prev, next, comm, NULL);
}

static int store_meta(struct sptd_store *st, const struct sptd_col_rawpt_opts *o)
{
	int ret;

	ret = sptd_store_meta_set(st, "source", "pt");
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "clock", "tsc");
	if (ret >= 0)
		ret = sptd_store_meta_set(st, "command", o->command ? o->command : "");
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

int sptd_col_rawpt_import_pt(struct sptd_store *st, const struct sptd_col_rawpt_opts *o)
{
	int ret, i;

	if (!st || !o || o->npt <= 0)
		return -EINVAL;
	ret = store_meta(st, o);
	for (i = 0; i < o->npt && ret >= 0; i++)
		ret = store_pt(st, i, o->pt[i]);
	return ret;
}

int sptd_col_rawpt_import_inputs(struct sptd_store *st, const struct sptd_col_rawpt_opts *o)
{
	int ret = 0, i;

	if (!st || !o)
		return -EINVAL;
	for (i = 0; i < o->nimage && ret >= 0; i++)
		ret = store_image(st, i + 1, o->image[i]);
	if (ret >= 0 && o->maps) {
		int64_t next_dso = o->nimage + 1;

		ret = store_maps(st, o->maps, &next_dso);
	}
	if (ret >= 0 && o->tasks)
		ret = for_each_line("--tasks", o->tasks, tasks_line, st);
	if (ret >= 0 && o->sched)
		ret = for_each_line("--sched", o->sched, sched_line, st);
	return ret;
}
