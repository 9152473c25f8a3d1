/* perfdata_import.c — a perf.data recording becomes an incident: its
 * records go into the raw tables (raw_pt per CPU, dso + raw_mmap for the
 * code found, raw_task, raw_switch) and meta (the recording's host, command
 * line and PT configuration), then the same derivation `sysptd decode` runs
 * builds the scheduling and call tables.  What only the perf.data knows
 * (lost records, truncated AUX areas) is added as gap and stats rows after.
 *
 * Divisions: state and helpers; record handlers; images; meta; the import.
 *
 * Switch sources, best first (one is used, so nothing is counted twice):
 * sched:sched_switch samples, SWITCH_CPU_WIDE, per-task SWITCH,
 * ITRACE_START (which task a CPU's trace starts in); perfdata_switches.c
 * stores them, and the task names, in time order. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "perfdata-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_store_mem.h"

#define PT_AUXTRACE_INTEL_PT 1
#define PT_AUXTRACE_ARM_SPE 4   /* perf's enum auxtrace_type */

/* intel_pt AUXTRACE_INFO private words (perf's intel-pt.h order) */
enum {
	PTI_PMU_TYPE, PTI_TIME_SHIFT, PTI_TIME_MULT, PTI_TIME_ZERO, PTI_CAP_USER_TIME_ZERO,
	PTI_TSC_BIT, PTI_NORETCOMP_BIT, PTI_HAVE_SCHED_SWITCH, PTI_SNAPSHOT_MODE,
	PTI_PER_CPU_MMAPS, PTI_MTC_BIT, PTI_MTC_FREQ_BITS, PTI_TSC_CTC_N, PTI_TSC_CTC_D,
	PTI_CYC_BIT, PTI_MAX_NONTURBO_RATIO, PTI_FILTER_STR_LEN, PTI_NWORDS
};

/* One executable mapping. */
struct pd_mmap {
	int pid;             /* -1: kernel */
	uint64_t start, len, pgoff;
	char *path;          /* recorded file name (heap) */
	char build_id[41];   /* from MMAP2 with build-id, "" none */
};

/* A gap known from the records (written after decode). */
struct pd_gap {
	int64_t ts;
	int cpu;
	char reason[96];
};

struct pd_ctx {
	struct sptd_col_perfdata *pd;
	struct sptd_store *st;
	const struct sptd_col_pd_import_opts *o;
	struct sptd_col_pd_import_result *res;
	struct sptd_col_pd_switch_fmt swfmt;
	struct sptd_col_pd_tracing *tracing; /* wakeup and IRQ tracepoints */
	uint64_t pti[PTI_NWORDS];         /* intel_pt AUXTRACE_INFO words */
	int npti;                         /* how many were present */
	int aux_type;                     /* AUXTRACE_INFO type, 0 none */
	uint64_t time_conv[3];            /* TIME_CONV shift, mult, zero (SPE timestamps) */
	struct sptd_col_pd_switch *sw;
	size_t nsw, capsw;
	struct sptd_col_pd_names names;   /* every task name seen, with its time */
	struct sptd_col_pd_exit *exits;   /* every task exit seen */
	size_t nexits, capexits;
	struct pd_mmap *mm;
	size_t nmm, capmm;
	struct pd_gap *gaps;
	size_t ngaps, capgaps;
	int aux_seq[PD_MAX_CPU];          /* next raw_pt seq per CPU */
	int pt_cpu_tid[PD_MAX_CPU];       /* per-thread buffers: pseudo CPU -> tid */
	int aux_tid[PD_MAX_CPU];          /* per CPU: AUXTRACE's tid, 0 none, -1 several */
	int max_cpu;                      /* highest CPU seen */
	int64_t t_min, t_max;             /* record times seen */
	int64_t lost, aux_truncated, aux_partial, aux_collision, aux_errors;
	int64_t snapshot_skipped;
	char *err;
	size_t errlen;
};

#define GROW(arr, n, cap)                                                      \
	((n) < (cap) ? 0 : grow((void **)&(arr), &(cap), sizeof(*(arr))))

static int grow(void **arr, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *n = realloc(*arr, ncap * elem);

	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static void see_time(struct pd_ctx *c, const struct sptd_col_perf_id *id)
{
	if (!id->has_time || !id->time)
		return;
	if (c->t_min == 0 || (int64_t)id->time < c->t_min)
		c->t_min = (int64_t)id->time;
	if ((int64_t)id->time > c->t_max)
		c->t_max = (int64_t)id->time;
}

static void see_cpu(struct pd_ctx *c, int cpu)
{
	if (cpu >= 0 && cpu < PD_MAX_CPU && cpu > c->max_cpu)
		c->max_cpu = cpu;
}

/* One switch fact; @state is the state @prev left in as sched_switch
 * prints it (NULL: not known).  A CPU or task the file cannot mean is left
 * out (0). */
static int add_switch(struct pd_ctx *c, int64_t ts, int cpu, int prev, int next,
                      int source, const char *comm, const char *state)
{
	struct sptd_col_pd_switch *s;

	if (cpu < 0 || cpu >= PD_MAX_CPU || next < 0)
		return 0;
	if (GROW(c->sw, c->nsw, c->capsw) < 0)
		return -ENOMEM;
	s = &c->sw[c->nsw];
	*s = (struct sptd_col_pd_switch){ .seq = c->nsw++, .ts = ts, .cpu = cpu, .prev = prev,
	                                  .other = -1, .next = next, .source = source };
	snprintf(s->comm, sizeof(s->comm), "%s", comm ? comm : "");
	snprintf(s->prev_state, sizeof(s->prev_state), "%s", state ? state : "");
	see_cpu(c, cpu);
	return 0;
}

static int add_gap(struct pd_ctx *c, int64_t ts, int cpu, const char *reason)
{
	if (GROW(c->gaps, c->ngaps, c->capgaps) < 0)
		return -ENOMEM;
	c->gaps[c->ngaps] = (struct pd_gap){ .ts = ts, .cpu = cpu };
	snprintf(c->gaps[c->ngaps].reason, sizeof(c->gaps[0].reason), "%s", reason);
	c->ngaps++;
	return 0;
}

/* ---- record handlers -------------------------------------------------------- */

static int on_auxtrace_info(struct pd_ctx *c, const struct sptd_col_perfdata_rec *r)
{
	int i;

	if (r->size < 16)
		return -EBADMSG;
	c->aux_type = (int)sptd_col_pd_u32(r->data + 8);
	c->npti = c->aux_type != PT_AUXTRACE_INTEL_PT ? 0 : (int)((r->size - 16) / 8);
	c->npti = c->npti > PTI_NWORDS ? PTI_NWORDS : c->npti;
	for (i = 0; i < c->npti; i++)
		c->pti[i] = sptd_col_pd_u64(r->data + 16 + 8 * i);
	return 0;
}

/* First PSB (16 bytes of 02 82) of a snapshot buffer: what comes before it
 * is the cut-off tail of an older packet stream. */
static const uint8_t *first_psb(const uint8_t *p, size_t len)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
	                                 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };

	return memmem(p, len, psb, sizeof(psb));
}

static int on_auxtrace(struct pd_ctx *c, const struct sptd_col_perfdata_rec *r)
{
	uint32_t idx = sptd_col_pd_u32(r->data + 32), tid = sptd_col_pd_u32(r->data + 36);
	uint32_t rcpu = sptd_col_pd_u32(r->data + 40);
	const uint8_t *p = r->payload;
	size_t len = (size_t)r->payload_len;
	int cpu, ret;

	if ((c->aux_type != PT_AUXTRACE_INTEL_PT && c->aux_type != PT_AUXTRACE_ARM_SPE) || !len)
		return 0;
	if (rcpu != UINT32_MAX) {
		cpu = (int)rcpu;
		/* the task a task-bound event traced there (perf record CMD) */
		if (cpu >= 0 && cpu < PD_MAX_CPU && tid != UINT32_MAX && tid > 0 && tid <= INT32_MAX)
			c->aux_tid[cpu] = c->aux_tid[cpu] == 0 || c->aux_tid[cpu] == (int)tid
			                  ? (int)tid : -1;
	} else {
		/* per-thread buffers (perf record --per-thread): one pseudo CPU
		 * each, above the real ones, running that thread */
		cpu = PD_MAX_CPU - 1 - (int)(idx % 256);
		c->pt_cpu_tid[cpu] = (int)tid;
	}
	if (cpu < 0 || cpu >= PD_MAX_CPU)
		return 0;
	if (c->npti > PTI_SNAPSHOT_MODE && c->pti[PTI_SNAPSHOT_MODE]) {
		const uint8_t *psb = first_psb(p, len);

		if (!psb) {
			c->snapshot_skipped++;
			return 0;
		}
		len -= (size_t)(psb - p);
		p = psb;
	}
	ret = c->aux_type == PT_AUXTRACE_ARM_SPE ?
	      SPTD_STORE_ADD(c->st, raw_spe, cpu, c->aux_seq[cpu]++, p, len) :
	      SPTD_STORE_ADD(c->st, raw_pt, cpu, c->aux_seq[cpu]++, p, len);
	if (ret >= 0)
		c->res->aux_bytes += (int64_t)len;
	if (rcpu != UINT32_MAX)
		see_cpu(c, cpu);
	return ret;
}

static int on_mmap(struct pd_ctx *c, const struct sptd_col_perf_record *r)
{
	struct pd_mmap *m;
	char path[PATH_MAX];

	if (r->type == SPTD_PERF_RECORD_MMAP2) {
		if (!(r->prot & 4))     /* PROT_EXEC */
			return 0;
	} else if (r->misc & SPTD_PERF_MISC_MMAP_DATA) {
		return 0;
	}
	if (!r->name || !r->name[0])
		return 0;   /* an anonymous mapping: no file to find its code in */
	if (snprintf(path, sizeof(path), "%s", r->name) >= (int)sizeof(path)) {
		/* cut, it could name another file: no image (a gap) instead */
		c->res->images_missing++;
		return 0;
	}
	if (GROW(c->mm, c->nmm, c->capmm) < 0)
		return -ENOMEM;
	m = &c->mm[c->nmm];
	memset(m, 0, sizeof(*m));
	m->pid = r->pid;
	m->start = r->addr;
	m->len = r->len;
	m->pgoff = r->pgoff;
	for (int i = 0; i < r->build_id_size; i++)
		snprintf(m->build_id + 2 * i, 3, "%02x", r->build_id[i]);
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	c->nmm++;
	return 0;
}

static int on_sample(struct pd_ctx *c, const struct sptd_col_perf_record *r,
                     const struct sptd_col_perfdata_attr *attr)
{
	const uint8_t *raw = r->sample.raw;
	struct sptd_col_pd_sw_fields sw;

	see_time(c, &r->id);
	if (attr->event.type != SPTD_PERF_TYPE_TRACEPOINT || !raw || !r->id.has_time)
		return 0;
	switch (sptd_col_pd_tracing_add(c->tracing, attr->event.config, (int64_t)r->id.time,
	                                r->id.cpu, raw, r->sample.raw_size)) {
	case 1: return 0;               /* a wakeup or interrupt: kept as ftrace */
	case -ENOMEM: return -ENOMEM;
	}
	if ((c->swfmt.id && attr->event.config != c->swfmt.id) || r->id.cpu < 0 ||
	    !sptd_col_pd_switch_read(&c->swfmt, raw, r->sample.raw_size, &sw))
		return 0;
	/* the names go out at the end, the latest of each task winning: the
	 * file is in per-CPU chunks, not in time order */
	if (sptd_col_pd_names_add(&c->names, (int64_t)r->id.time, sw.next, sw.next_comm) < 0 ||
	    sptd_col_pd_names_add(&c->names, (int64_t)r->id.time, sw.prev, sw.prev_comm) < 0)
		return -ENOMEM;
	return add_switch(c, (int64_t)r->id.time, r->id.cpu, sw.prev, sw.next,
	                  SPTD_COL_PD_SW_TRACEPOINT, sw.next_comm, sw.state);
}

/* The switch records: which task a CPU switched to (and from).  A switch
 * out marked preempted (Linux 4.17+) left the task runnable: "R+", as
 * sched_switch prints it; otherwise the state it blocked in is not known. */
static int on_switch(struct pd_ctx *c, const struct sptd_col_perf_record *r)
{
	const struct sptd_col_perf_id *id = &r->id;
	int wide = r->type == SPTD_PERF_RECORD_SWITCH_CPU_WIDE;
	int source = wide ? SPTD_COL_PD_SW_CPU_WIDE : SPTD_COL_PD_SW_TASK;
	int ret;

	if (!id->has_time || id->tid < 0)
		return 0;
	if (r->switch_out)
		return add_switch(c, (int64_t)id->time, id->cpu, id->tid, wide ? r->other_tid : 0,
		                  source, NULL, r->switch_preempt ? "R+" : NULL);
	ret = add_switch(c, (int64_t)id->time, id->cpu, -1, id->tid, source, NULL, NULL);
	if (ret == 0 && wide && c->nsw && c->sw[c->nsw - 1].next == id->tid)
		c->sw[c->nsw - 1].other = r->other_tid;
	return ret;
}

/* AUX flags that mean trace was lost: counted, and a gap. */
static int on_aux(struct pd_ctx *c, const struct sptd_col_perf_record *r)
{
	uint64_t flags = r->aux_flags;
	char text[96];

	if (flags & SPTD_PERF_AUX_FLAG_TRUNCATED)
		c->aux_truncated++;
	if (flags & SPTD_PERF_AUX_FLAG_PARTIAL)
		c->aux_partial++;
	if (flags & SPTD_PERF_AUX_FLAG_COLLISION)
		c->aux_collision++;
	if (!(flags & (SPTD_PERF_AUX_FLAG_TRUNCATED | SPTD_PERF_AUX_FLAG_PARTIAL |
	               SPTD_PERF_AUX_FLAG_COLLISION)))
		return 0;
	snprintf(text, sizeof(text), "pt: perf AUX area %s%s%s: trace lost",
	         flags & SPTD_PERF_AUX_FLAG_TRUNCATED ? "truncated " : "",
	         flags & SPTD_PERF_AUX_FLAG_PARTIAL ? "partial " : "",
	         flags & SPTD_PERF_AUX_FLAG_COLLISION ? "collision " : "");
	return add_gap(c, (int64_t)r->id.time, r->id.cpu, text);
}

static int on_record(void *arg, const struct sptd_col_perfdata_rec *rec)
{
	struct pd_ctx *c = arg;
	const struct sptd_col_perfdata_attr *attr = NULL;
	struct sptd_col_perf_record r;
	char text[96];
	int ret = 0;

	c->res->records++;
	memset(&r, 0, sizeof(r));
	r.id.pid = r.id.tid = r.id.cpu = -1;
	if (rec->type < SPTD_PERF_RECORD_USER_START) {
		ret = sptd_col_perfdata_rec_parse(c->pd, rec, &r, &attr);
		if (rec->type == SPTD_PERF_RECORD_SAMPLE)
			return ret < 0 || !attr ? 0 : on_sample(c, &r, attr);
		/* a mapping that does not parse is a corrupt file; another
		 * record that does not is skipped (counted above) */
		if (ret < 0)
			return rec->type == SPTD_PERF_RECORD_MMAP ||
			       rec->type == SPTD_PERF_RECORD_MMAP2 ? -EBADMSG : 0;
	}
	see_time(c, &r.id);
	switch (rec->type) {
	case SPTD_PERF_RECORD_AUXTRACE_INFO:
		ret = on_auxtrace_info(c, rec);
		break;
	case SPTD_PERF_RECORD_AUXTRACE:
		ret = on_auxtrace(c, rec);
		break;
	case SPTD_PERF_RECORD_MMAP:
	case SPTD_PERF_RECORD_MMAP2:
		ret = on_mmap(c, &r);
		break;
	case SPTD_PERF_RECORD_COMM: {
		char comm[17];   /* a task's comm is 15 characters at most */

		snprintf(comm, sizeof(comm), "%s", r.name);
		ret = SPTD_STORE_ADD(c->st, raw_task, r.pid, r.tid, comm, NULL);
		if (ret >= 0)
			ret = sptd_col_pd_names_add(&c->names, r.id.has_time ? (int64_t)r.id.time : 0, r.tid, comm);
		break;
	}
	case SPTD_PERF_RECORD_FORK:
		ret = SPTD_STORE_ADD(c->st, raw_task, r.pid, r.tid, NULL, NULL);
		break;
	case SPTD_PERF_RECORD_EXIT:
		ret = 0;
		if (r.tid > 0 && r.id.has_time) {
			if (GROW(c->exits, c->nexits, c->capexits) < 0)
				return -ENOMEM;
			c->exits[c->nexits++] = (struct sptd_col_pd_exit){
				.ts = (int64_t)r.id.time, .pid = r.pid, .tid = r.tid,
			};
		}
		break;
	case SPTD_PERF_RECORD_ITRACE_START:
		if (r.id.has_time)
			ret = add_switch(c, (int64_t)r.id.time, r.id.cpu, -1, r.tid,
			                 SPTD_COL_PD_SW_ITRACE, NULL, NULL);
		break;
	case SPTD_PERF_RECORD_SWITCH:
	case SPTD_PERF_RECORD_SWITCH_CPU_WIDE:
		ret = on_switch(c, &r);
		break;
	case SPTD_PERF_RECORD_AUX:
		ret = on_aux(c, &r);
		break;
	case SPTD_PERF_RECORD_LOST:
		c->lost += (int64_t)r.lost;
		snprintf(text, sizeof(text), "perf: %" PRIu64 " sideband records lost", r.lost);
		ret = add_gap(c, (int64_t)r.id.time, r.id.cpu, text);
		break;
	case SPTD_PERF_RECORD_AUXTRACE_ERROR:
		c->aux_errors++;
		break;
	case SPTD_PERF_RECORD_TIME_CONV:
		for (int k = 0; k < 3 && rec->size >= 8 + 8 * (k + 1); k++)
			c->time_conv[k] = sptd_col_pd_u64(rec->data + 8 + 8 * k);
		break;
	default:
		break;
	}
	if (r.id.cpu >= 0)
		see_cpu(c, r.id.cpu);
	return ret;
}

/* ---- images ----------------------------------------------------------------- */

/* BUILD_ID feature: the build-id recorded for @path ("" unknown). */
static void recorded_build_id(const struct sptd_col_perfdata *pd, const char *path,
                              char *out, size_t outlen)
{
	size_t len = 0, pos = 0;
	const uint8_t *p = sptd_col_perfdata_feature(pd, PD_FEAT_BUILD_ID, &len);

	out[0] = 0;
	while (p && len - pos >= 8 + 4 + 24) {
		uint16_t misc, size;
		size_t n = 20;

		memcpy(&misc, p + pos + 4, 2);
		memcpy(&size, p + pos + 6, 2);
		if (size < 36 || size > len - pos)
			return;
		if (misc & SPTD_PERF_MISC_BUILD_ID_SIZE)
			n = p[pos + 12 + 20] <= 20 ? p[pos + 12 + 20] : 20;
		if (strnlen((const char *)p + pos + 36, size - 36) < (size_t)(size - 36) &&
		    strcmp((const char *)p + pos + 36, path) == 0 && outlen > 2 * n) {
			for (size_t i = 0; i < n; i++)
				snprintf(out + 2 * i, 3, "%02x", p[pos + 12 + i]);
			return;
		}
		pos += size;
	}
}

static int store_images(struct pd_ctx *c, int every_task)
{
	struct sptd_col_pd_loaded cache = { 0 };
	int64_t next_dso = 1;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < c->nmm && ret >= 0; i++) {
		struct pd_mmap *m = &c->mm[i];
		char bid[129], found[PATH_MAX];   /* a build-id of up to 64 bytes, whole */
		struct sptd_dec_symfile *sf = NULL;
		int64_t dso = -1, bias = 0;
		int is_kernel = m->pid == -1 || strncmp(m->path, "[kernel.kallsyms]", 17) == 0;

		if (!m->path)
			continue;
		/* one dso per path: an earlier mapping of the same file */
		for (j = 0; j < i; j++)
			if (c->mm[j].path && strcmp(c->mm[j].path, m->path) == 0)
				break;
		snprintf(bid, sizeof(bid), "%s", m->build_id);
		if (!bid[0])
			recorded_build_id(c->pd, m->path, bid, sizeof(bid));
		if (sptd_col_perfdata_find_image(&c->o->paths, m->path, bid[0] ? bid : NULL,
		                                 found, sizeof(found)) <= 0) {
			if (m->path[0] == '/' || is_kernel)
				c->res->images_missing++;
			if (j == i && (m->path[0] == '/' || is_kernel))
				ret = SPTD_STORE_ADD(c->st, dso, next_dso++, m->path, bid[0] ? bid : NULL);
			continue;
		}
		/* the same file found for an earlier mapping: its dso row */
		ret = sptd_store_dso_find_path(c->st, found, &dso);
		if (ret < 0)
			break;
		if (!is_kernel) {
			ret = sptd_col_perfdata_load(&cache, found, &sf);
			if (ret == -ENOMEM)
				break;
			if (ret >= 0 && sptd_dec_symfile_bias(sf, m->start, m->pgoff, &bias) < 0) {
				sptd_col_log(LOG_WARNING, "%s (for %s): no program header maps offset "
				             "0x%" PRIx64 " of the mapping: its code will show as gaps",
				             found, m->path, (uint64_t)m->pgoff);
				c->res->images_missing++;
				ret = 0;
				continue;
			}
			if (ret >= 0 && !bid[0] && sptd_dec_symfile_build_id(sf))
				snprintf(bid, sizeof(bid), "%s", sptd_dec_symfile_build_id(sf));
			if (ret < 0) {
				sptd_col_log(LOG_WARNING, "%s (for %s): %s: its code will show as "
				             "gaps", found, m->path, strerror(-ret));
				c->res->images_missing++;
				ret = 0;
				continue;
			}
		}
		if (dso < 0) {
			dso = next_dso++;
			ret = SPTD_STORE_ADD(c->st, dso, dso, found, bid[0] ? bid : NULL);
		}
		if (ret >= 0)
			ret = SPTD_STORE_ADD(c->st, raw_mmap, is_kernel || every_task ? -1 : m->pid,
			                     m->start, m->start + m->len, m->pgoff, dso, bias, 0);
		c->res->images++;
	}
	sptd_col_perfdata_loaded_fini(&cache);
	return ret < 0 ? ret : 0;
}

/* ---- meta ------------------------------------------------------------------- */

/* meta pt_aux_tids, "CPU:TID,...": the one task each CPU's AUXTRACE
 * records name, for a trace without timing (decode gives it that CPU's
 * calls; its switches cannot be placed).  None: no key. */
static int meta_aux_tids(struct pd_ctx *c)
{
	char buf[4096];
	size_t n = 0;

	buf[0] = '\0';
	for (int cpu = 0; cpu < PD_MAX_CPU && n < sizeof(buf) - 32; cpu++)
		if (c->aux_tid[cpu] > 0)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d:%d", n ? "," : "", cpu,
			                      c->aux_tid[cpu]);
	return n ? sptd_store_meta_set(c->st, "pt_aux_tids", buf) : 0;
}

static int meta_feature(struct pd_ctx *c, int feat, const char *key)
{
	char buf[1024];

	if (sptd_col_perfdata_feature_string(c->pd, feat, buf, sizeof(buf)) <= 0)
		return 0;
	return sptd_store_meta_set(c->st, key, buf);
}

static int lowest_bit(uint64_t v)
{
	return v ? __builtin_ctzll(v) : 0;
}

static int store_pt_meta(struct pd_ctx *c, uint64_t config)
{
	struct sptd_store *st = c->st;
	char cpuid[128], vendor[64];
	int fam, model, step, ret = 0;

	if (sptd_col_perfdata_feature_string(c->pd, PD_FEAT_CPUID, cpuid, sizeof(cpuid)) > 0 &&
	    sscanf(cpuid, "%63[^,],%d,%d,%d", vendor, &fam, &model, &step) == 4) {
		ret = sptd_store_meta_set_int(st, "pt_cpu_family", fam);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "pt_cpu_model", model);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "pt_cpu_stepping", step);
	}
#define PTI(i) (c->npti > (i) ? c->pti[i] : 0)
	if (ret >= 0 && PTI(PTI_MTC_BIT) && (config & PTI(PTI_MTC_BIT)))
		ret = sptd_store_meta_set_int(st, "pt_mtc_freq", (int64_t)((config &
		                              PTI(PTI_MTC_FREQ_BITS)) >> lowest_bit(PTI(PTI_MTC_FREQ_BITS))));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_nom_freq", (int64_t)PTI(PTI_MAX_NONTURBO_RATIO));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_cpuid15_eax", (int64_t)PTI(PTI_TSC_CTC_D));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_cpuid15_ebx", (int64_t)PTI(PTI_TSC_CTC_N));
	if (ret >= 0 && PTI(PTI_CAP_USER_TIME_ZERO) && PTI(PTI_TIME_MULT)) {
		ret = sptd_store_meta_set_int(st, "tsc_mult", (int64_t)PTI(PTI_TIME_MULT));
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "tsc_shift", (int64_t)PTI(PTI_TIME_SHIFT));
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "tsc_zero", 0);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(st, "tsc_offset_ns", (int64_t)PTI(PTI_TIME_ZERO));
	}
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_no_timing", !(config & PTI(PTI_TSC_BIT)));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_pmu_type", (int64_t)PTI(PTI_PMU_TYPE));
	if (ret >= 0) {
		char hex[32];

		snprintf(hex, sizeof(hex), "0x%" PRIx64, config);
		ret = sptd_store_meta_set(st, "pt_config", hex);
	}
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_cyc", PTI(PTI_CYC_BIT) && (config & PTI(PTI_CYC_BIT)));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_noretcomp",
		                              PTI(PTI_NORETCOMP_BIT) && (config & PTI(PTI_NORETCOMP_BIT)));
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_snapshot", PTI(PTI_SNAPSHOT_MODE) != 0);
	if (ret >= 0)
		ret = sptd_store_meta_set_int(st, "pt_per_cpu_mmaps", PTI(PTI_PER_CPU_MMAPS) != 0);
#undef PTI
	return ret;
}

static int store_meta(struct pd_ctx *c)
{
	char buf[4096];
	size_t len = 0;
	const uint8_t *nr = sptd_col_perfdata_feature(c->pd, PD_FEAT_NRCPUS, &len);
	int64_t cpus = c->max_cpu + 1;
	int ret;

	if (nr && len >= 8 && sptd_col_pd_u32(nr) > 0 && sptd_col_pd_u32(nr) <= PD_MAX_CPU &&
	    (int64_t)sptd_col_pd_u32(nr) > cpus)
		cpus = sptd_col_pd_u32(nr);
	ret = sptd_store_meta_set(c->st, "source", c->res->has_pt ? "pt" : c->res->has_spe ? "spe" :
	                          "sched");
	for (int k = 0; k < 3 && ret >= 0 && c->res->has_spe && c->time_conv[1]; k++)
		ret = sptd_store_meta_set_int(c->st, (const char *const[]){ "spe_time_shift",
		                              "spe_time_mult", "spe_time_zero" }[k],
		                              (int64_t)c->time_conv[k]);
	if (ret >= 0)
		ret = meta_aux_tids(c);
	if (ret >= 0)
		ret = sptd_store_meta_set(c->st, "clock", "perf");
	if (ret >= 0)
		ret = sptd_store_meta_set(c->st, "trigger_spec", "import");
	if (ret >= 0)
		ret = sptd_store_meta_set(c->st, "command", c->o->command ? c->o->command : "import");
	if (ret >= 0)
		ret = sptd_store_meta_set_int(c->st, "cpus", cpus);
	if (ret >= 0)
		ret = meta_feature(c, PD_FEAT_HOSTNAME, "host");
	if (ret >= 0)
		ret = meta_feature(c, PD_FEAT_OSRELEASE, "kernel");
	if (ret >= 0)
		ret = meta_feature(c, PD_FEAT_ARCH, "machine");
	if (ret >= 0)
		ret = meta_feature(c, PD_FEAT_CPUDESC, "cpu_model");
	if (ret >= 0)
		ret = meta_feature(c, PD_FEAT_VERSION, "perf_version");
	if (ret >= 0 && sptd_col_perfdata_cmdline(c->pd, buf, sizeof(buf)) > 0)
		ret = sptd_store_meta_set(c->st, "perf_cmdline", buf);
	if (ret >= 0)
		ret = sptd_store_meta_set(c->st, "perf_data", c->o->input);
	if (ret >= 0 && c->t_max > 0) {
		/* perf recorded from its first record on: a CPU whose first event
		 * comes later lost nothing before it, unlike a wrapped ftrace ring */
		ret = sptd_store_meta_set_int(c->st, "ftrace_started", c->t_min);
		if (ret >= 0)
			ret = sptd_store_meta_set(c->st, "ftrace_started_why",
			                          "perf record started (an imported perf.data)");
		if (ret >= 0)
			ret = sptd_store_meta_set_int(c->st, "window_start", c->t_min);
		if (ret >= 0)
			ret = sptd_store_meta_set_int(c->st, "window_end", c->t_max);
		/* record times are the file's: a span past INT64_MAX is held there */
		if (ret >= 0)
			ret = sptd_store_meta_set_int(c->st, "window_ns", c->t_min < 0 &&
			                              c->t_max > INT64_MAX + c->t_min ? INT64_MAX :
			                              c->t_max - c->t_min);
	}
	return ret;
}

/* ---- the import -------------------------------------------------------------- */

static int store_after(struct pd_ctx *c)
{
	static const char *const names[] = { "perf_records", "perf_lost", "perf_aux_truncated",
	                                     "perf_aux_partial", "perf_aux_collision",
	                                     "perf_auxtrace_errors", "perf_images_missing",
	                                     "perf_snapshot_no_psb" };
	const int64_t vals[8] = { c->res->records, c->lost, c->aux_truncated, c->aux_partial,
	                          c->aux_collision, c->aux_errors, c->res->images_missing,
	                          c->snapshot_skipped };
	size_t i;
	int ret = 0;

	for (i = 0; i < c->ngaps && ret >= 0; i++)
		ret = SPTD_STORE_ADD(c->st, gap, c->gaps[i].ts, 0, c->gaps[i].cpu, c->gaps[i].reason);
	for (i = 0; i < 8 && ret >= 0; i++)
		ret = SPTD_STORE_ADD(c->st, stats, names[i], -1, vals[i]);
	return ret;
}

static uint64_t pt_config(const struct sptd_col_perfdata *pd, uint64_t pmu_type)
{
	for (size_t i = 0; i < pd->nattrs; i++)
		if (pd->attrs[i].event.type == pmu_type)
			return pd->attrs[i].event.config;
	return 0;
}

int sptd_col_perfdata_import(const struct sptd_col_pd_import_opts *o,
                             struct sptd_col_pd_import_result *res,
                             char *err, size_t errlen)
{
	struct pd_ctx c;
	uint64_t config = 0;
	int ret;
	size_t i;

	if (!o || !o->input || !o->output || !res || !err || !errlen)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	err[0] = 0;
	c.o = o;
	c.res = res;
	c.err = err;
	c.errlen = errlen;
	ret = sptd_col_perfdata_open(o->input, &c.pd, err, errlen);
	if (ret < 0)
		return ret;
	sptd_col_perfdata_switch_fmt(c.pd, &c.swfmt);
	ret = sptd_col_pd_tracing_create(c.pd, &c.tracing);
	if (ret < 0) {
		snprintf(err, errlen, "reading %s: %s", o->input, strerror(-ret));
		goto out;
	}
	ret = sptd_store_create(o->output, &c.st);
	if (ret < 0) {
		snprintf(err, errlen, "cannot create %s: %s", o->output,
		         ret == -EEXIST ? "it already exists" : sptd_store_errmsg(NULL));
		goto out;
	}
	if (o->opened) {
		ret = o->opened(o->opened_ctx);
		if (ret < 0) {
			snprintf(err, errlen, "stopped before reading %s", o->input);
			goto out;
		}
	}
	ret = sptd_col_perfdata_walk(c.pd, on_record, &c);
	if (ret < 0) {
		if (sptd_col_perfdata_errmsg(c.pd)[0])
			snprintf(err, errlen, "%s", sptd_col_perfdata_errmsg(c.pd));
		else if (ret == -EBADMSG)
			snprintf(err, errlen, "corrupt record in %s", o->input);
		else
			snprintf(err, errlen, "%s", sptd_store_errmsg(c.st));
		goto out;
	}
	res->has_pt = c.aux_type == PT_AUXTRACE_INTEL_PT;
	res->has_spe = c.aux_type == PT_AUXTRACE_ARM_SPE;
	if (c.aux_type && !res->has_pt && !res->has_spe)
		sptd_col_log(LOG_WARNING, "%s holds AUX trace of type %d, not Intel PT: "
		             "importing its scheduling only", o->input, c.aux_type);
	if (!res->has_pt && !res->has_spe && !c.nsw) {
		snprintf(err, errlen, "%s has neither Intel PT (perf record -e intel_pt//) nor "
		         "scheduling records (sched:sched_switch, --switch-events): nothing "
		         "to import", o->input);
		ret = -ENODATA;
		goto out;
	}
	if (!res->has_pt && !res->has_spe)
		sptd_col_log(LOG_NOTICE, "%s was recorded without Intel PT: importing its "
		             "scheduling only", o->input);
	if (res->has_pt)
		config = pt_config(c.pd, c.npti > PTI_PMU_TYPE ? c.pti[PTI_PMU_TYPE] : 0);
	sptd_col_pd_switches_exits(c.sw, c.nsw, c.exits, c.nexits);
	ret = sptd_col_pd_switches_store(c.st, c.sw, c.nsw, c.pt_cpu_tid, PD_MAX_CPU, c.t_min,
	                                 &res->switches);
	if (ret >= 0)
		ret = sptd_col_pd_names_store(&c.names, c.st);
	if (ret >= 0) {
		int64_t n = sptd_col_pd_tracing_store(c.tracing, c.st);

		ret = n < 0 ? (int)n : 0;
		res->tracepoints = n > 0 ? n : 0;
	}
	if (ret >= 0)
		/* without timing the decoder cannot place switches: the traced
		 * code must then be visible to whichever task it attributes */
		ret = store_images(&c, res->has_pt && c.npti > PTI_TSC_BIT &&
		                       !(config & c.pti[PTI_TSC_BIT]));
	if (ret >= 0)
		ret = store_meta(&c);
	if (ret >= 0 && res->has_pt)
		ret = store_pt_meta(&c, config);
	if (ret >= 0)
		ret = sptd_col_derive_all(c.st, o->jobs);
	if (ret >= 0)
		ret = store_after(&c);
	if (ret >= 0 && o->written)
		ret = o->written(o->opened_ctx, c.st);
	if (ret >= 0)
		ret = sptd_store_commit(c.st);
	if (ret < 0 && !err[0])
		snprintf(err, errlen, "%s: %s", o->output, sptd_store_errmsg(c.st)[0] ?
		         sptd_store_errmsg(c.st) : strerror(-ret));
out:
	/* the arguments were checked above: a value the store or decoder
	 * refuses from here on came from the file */
	if (ret == -EINVAL)
		ret = -EBADMSG;
	sptd_store_destroy(c.st);
	sptd_col_perfdata_close(c.pd);
	for (i = 0; i < c.nmm; i++)
		free(c.mm[i].path);
	free(c.mm);
	free(c.sw);
	free(c.gaps);
	sptd_col_pd_names_free(&c.names);
	free(c.exits);
	sptd_col_perfdata_switch_fmt_fini(&c.swfmt);
	sptd_col_pd_tracing_destroy(c.tracing);
	return ret < 0 ? ret : 0;
}
