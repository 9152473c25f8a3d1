/* derive_spe.c — mem_sample rows from raw_spe: each CPU's Arm SPE bytes
 * decoded by decode/'s SPE decoder (decode/spe.c), in the order stored.
 *
 * Time: an SPE timestamp counts the generic timer; perf's TIME_CONV
 * (meta spe_time_shift, spe_time_mult, spe_time_zero) makes it perf-clock
 * ns the way perf does: zero + (ts >> shift) * mult + ((ts & mask) * mult
 * >> shift).  Without them the timestamp is taken as ns.  The task is the
 * record's Context packet (Linux writes the tid into CONTEXTIDR); a record
 * without one names none (utid NULL), and no function (derive_spe_sym.c
 * finds it in the task's process).  What did not decode is counted in
 * stats (spe_bad_bytes, spe_dropped_records, spe_records). */
#include <errno.h>
#include <stdint.h>

#include "derive-local.h"
#include "sptd_dec.h"
#include "sptd_store.h"
#include "sptd_store_mem.h"

struct spe_ctx {
	struct sptd_store *st;
	struct sptd_col_tasks *tasks;
	struct sptd_col_spe_sym *sym;  /* pc -> symbol.id */
	int cpu;                     /* the row's CPU */
	uint64_t shift, mult, zero;  /* TIME_CONV; mult 0: none */
	struct sptd_dec_spe_stats stats;
};

static int64_t spe_time(const struct spe_ctx *c, uint64_t ts)
{
	uint64_t ns;

	if (!c->mult || c->shift > 63)
		return (int64_t)(ts & INT64_MAX);
	ns = c->zero + (ts >> c->shift) * c->mult +
	     (((ts & ((1ull << c->shift) - 1)) * c->mult) >> c->shift);
	return (int64_t)(ns & INT64_MAX);
}

static int on_record(void *arg, const struct sptd_dec_spe_record *r)
{
	struct spe_ctx *c = arg;
	int64_t utid = -1, symbol = -ENOENT;

	if (r->have & SPTD_DEC_SPE_HAVE_CONTEXT && r->context <= INT32_MAX && r->context > 0) {
		int pid = sptd_col_tasks_pid(c->tasks, (int)r->context);

		utid = sptd_col_tasks_utid(c->tasks, (int)r->context);
		if (utid < 0)
			return (int)utid;
		symbol = sptd_col_spe_sym_resolve(c->sym, pid >= 0 ? pid : (int)r->context, r->pc);
		if (symbol < 0 && symbol != -ENOENT)
			return (int)symbol;
	}
	return SPTD_STORE_ADD(c->st, mem_sample, .ts = spe_time(c, r->ts), .cpu = c->cpu,
	                      .utid = utid, .pc = r->pc, .symbol_id = symbol < 0 ? -1 : symbol,
	                      .vaddr = r->have & SPTD_DEC_SPE_HAVE_VADDR ? r->vaddr : 0,
	                      .paddr = r->have & SPTD_DEC_SPE_HAVE_PADDR ? r->paddr : 0,
	                      .op = sptd_dec_spe_op_name(r->op),
	                      .data_source = r->have & SPTD_DEC_SPE_HAVE_SOURCE ? r->source : -1,
	                      .lat_total = r->have & SPTD_DEC_SPE_HAVE_LAT_TOTAL ? r->lat_total : -1,
	                      .lat_issue = r->have & SPTD_DEC_SPE_HAVE_LAT_ISSUE ? r->lat_issue : -1,
	                      .lat_xlat = r->have & SPTD_DEC_SPE_HAVE_LAT_XLAT ? r->lat_xlat : -1,
	                      .events = r->have & SPTD_DEC_SPE_HAVE_EVENTS ?
	                                (int64_t)(r->events & INT64_MAX) : -1);
}

static int on_chunk(void *arg, const struct sptd_store_chunk_row *row)
{
	struct spe_ctx *c = arg;
	int64_t n;

	c->cpu = row->cpu;
	n = sptd_dec_spe_decode(row->data, row->len, on_record, c, &c->stats);
	return n < 0 ? (int)n : 0;
}

int sptd_col_derive_spe(struct sptd_store *st, struct sptd_col_tasks *tasks)
{
	struct spe_ctx c = { .st = st, .tasks = tasks };
	int64_t v;
	int ret;

	if (!st || !tasks)
		return -EINVAL;
	if (sptd_store_meta_get_int(st, "spe_time_mult", &v) == 0 && v > 0) {
		c.mult = (uint64_t)v;
		if (sptd_store_meta_get_int(st, "spe_time_shift", &v) == 0 && v >= 0)
			c.shift = (uint64_t)v;
		if (sptd_store_meta_get_int(st, "spe_time_zero", &v) == 0)
			c.zero = (uint64_t)v;
	}
	ret = sptd_store_count(st, SPTD_STORE_T_RAW_SPE, &v);
	if (ret < 0 || v == 0)
		return ret < 0 ? ret : 0;
	ret = sptd_col_spe_sym_create(st, &c.sym);
	if (ret >= 0)
		ret = SPTD_STORE_EACH(st, raw_spe, on_chunk, &c);
	sptd_col_spe_sym_destroy(c.sym);
	if (ret >= 0 && c.stats.records + c.stats.bad_bytes + c.stats.dropped > 0) {
		ret = SPTD_STORE_ADD(st, stats, "spe_records", -1, (int64_t)c.stats.records);
		if (ret >= 0)
			ret = SPTD_STORE_ADD(st, stats, "spe_bad_bytes", -1, (int64_t)c.stats.bad_bytes);
		if (ret >= 0)
			ret = SPTD_STORE_ADD(st, stats, "spe_dropped_records", -1,
			                     (int64_t)c.stats.dropped);
	}
	return ret < 0 ? ret : 0;
}
