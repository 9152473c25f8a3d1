/* store_writer.c — the bulk writer: a thread that owns the store's
 * connection while the caller produces rows, so that producing (decoding
 * PT, building slices) and inserting overlap.
 *
 * The caller queues rows (copied) in order; they go out in batches to the
 * writer thread, which inserts them in the same order through the usual
 * add functions (slices through the bulk path).  While a writer runs, the
 * caller uses the store only through it; finishing waits for every queued
 * row and hands the store back.  The first failure stops the writer: later
 * calls return it, and finishing reports it. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store-local.h"

/* Rows per batch handed to the thread. */
#define WRITER_BATCH 4096
/* Batches queued at most: the producer waits beyond (bounded memory). */
#define WRITER_QUEUE 8

/* What one queued row is. */
enum writer_op { OP_SLICES, OP_SYMBOL, OP_GAP, OP_STAT };

/* One queued row, or a run of slices. */
struct writer_row {
	enum writer_op op;                 /* which table */
	union {
		struct {
			size_t first, n;
		} slices;                   /* OP_SLICES: the batch's slices
		                             * [first, first + n) */
		struct {
			int64_t id, dso_id;
			uint64_t addr, size;
		} symbol;                   /* OP_SYMBOL (name in text) */
		struct {
			int64_t ts, dur;
			int cpu;
		} gap;                      /* OP_GAP (reason in text) */
		struct {
			int cpu;
			int64_t value;
		} stat;                     /* OP_STAT (name in text) */
	} u;
	char *text;                        /* owned copy of the row's string */
};

/* A batch of rows, in order; slices are kept apart, contiguous, so the
 * thread inserts them from where they are. */
struct writer_batch {
	struct writer_row rows[WRITER_BATCH]; /* the rows, slice runs included */
	size_t n;                          /* rows used */
	struct sptd_store_slice_row slices[WRITER_BATCH]; /* the slices (kinds
	                                    * are static) */
	size_t nslices;                    /* slices used */
	struct writer_batch *next;         /* queue / free list link */
};

struct sptd_store_writer {
	struct sptd_store *st;             /* the store it writes */
	pthread_t thread;                  /* the writer */
	pthread_mutex_t lock;              /* guards everything below */
	pthread_cond_t cond;               /* queue changed / done */
	struct writer_batch *head, *tail;  /* queued for the thread */
	size_t queued;                     /* batches in the queue */
	struct writer_batch *free;         /* batches to reuse */
	int closing;                       /* no more batches will come */
	int err;                           /* first failure, 0 none */
	struct writer_batch *cur;          /* the producer's batch being filled */
};

static void batch_clear(struct writer_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->rows[i].text);
	b->n = 0;
	b->nslices = 0;
}

/* Insert one batch (thread side).  0 or the first error. */
static int batch_write(struct sptd_store_writer *w, struct writer_batch *b)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < b->n && ret >= 0; i++) {
		const struct writer_row *r = &b->rows[i];

		switch (r->op) {
		case OP_SLICES:
			ret = sptd_store_slices_add(w->st, &b->slices[r->u.slices.first],
			                            r->u.slices.n);
			break;
		case OP_SYMBOL:
			ret = SPTD_STORE_ADD(w->st, symbol, r->u.symbol.id, r->text, r->u.symbol.dso_id,
			                     r->u.symbol.addr, r->u.symbol.size);
			break;
		case OP_GAP:
			ret = SPTD_STORE_ADD(w->st, gap, r->u.gap.ts, r->u.gap.dur, r->u.gap.cpu, r->text);
			break;
		case OP_STAT:
			ret = SPTD_STORE_ADD(w->st, stats, r->text, r->u.stat.cpu, r->u.stat.value);
			break;
		}
	}
	return ret < 0 ? ret : 0;
}

static void *writer_main(void *arg)
{
	struct sptd_store_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct writer_batch *b;
		int ret;

		while (!w->head && !w->closing)
			pthread_cond_wait(&w->cond, &w->lock);
		b = w->head;
		if (!b)
			break;
		w->head = b->next;
		if (!w->head)
			w->tail = NULL;
		w->queued--;
		pthread_cond_broadcast(&w->cond);
		ret = w->err;
		pthread_mutex_unlock(&w->lock);
		if (!ret)
			ret = batch_write(w, b);
		batch_clear(b);
		pthread_mutex_lock(&w->lock);
		if (ret < 0 && !w->err)
			w->err = ret;
		b->next = w->free;
		w->free = b;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int sptd_store_writer_start(struct sptd_store *st, struct sptd_store_writer **out)
{
	struct sptd_store_writer *w;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = sptd_store_writable_check(st, "starting the bulk writer");
	if (ret < 0)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return sptd_store_fail(st, -ENOMEM, "starting the bulk writer: out of memory");
	w->st = st;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return sptd_store_fail(st, -EAGAIN, "starting the bulk writer: no thread");
	}
	*out = w;
	return 0;
}

/* Hand the current batch to the thread, waiting while the queue is full.
 * 0 or the writer's error. */
static int writer_push(struct sptd_store_writer *w)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	while (w->queued >= WRITER_QUEUE && !w->err)
		pthread_cond_wait(&w->cond, &w->lock);
	ret = w->err;
	if (w->cur && w->cur->n) {
		w->cur->next = NULL;
		if (w->tail)
			w->tail->next = w->cur;
		else
			w->head = w->cur;
		w->tail = w->cur;
		w->queued++;
		w->cur = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return ret;
}

/* The next free row of the producer's batch (pushing a full one first:
 * all rows, or all slices used), NULL with *ret set on failure. */
static struct writer_row *writer_row(struct sptd_store_writer *w, int *ret)
{
	*ret = 0;
	if (w->cur && (w->cur->n == WRITER_BATCH || w->cur->nslices == WRITER_BATCH)) {
		*ret = writer_push(w);
		if (*ret < 0)
			return NULL;
	}
	if (!w->cur) {
		pthread_mutex_lock(&w->lock);
		w->cur = w->free;
		if (w->cur)
			w->free = w->cur->next;
		*ret = w->err;
		pthread_mutex_unlock(&w->lock);
		if (*ret < 0)
			return NULL;
		if (!w->cur)
			w->cur = malloc(sizeof(*w->cur));
		if (!w->cur) {
			*ret = -ENOMEM;
			return NULL;
		}
		w->cur->n = 0;
		w->cur->nslices = 0;
	}
	return &w->cur->rows[w->cur->n];
}

/* Queue row @r (filled by the caller); @text is copied. */
static int writer_queue(struct sptd_store_writer *w, struct writer_row *r, const char *text)
{
	r->text = NULL;
	if (text) {
		r->text = strdup(text);
		if (!r->text)
			return -ENOMEM;
	}
	w->cur->n++;
	return 0;
}

int sptd_store_writer_slices(struct sptd_store_writer *w, const struct sptd_store_slice_row *rows,
                             size_t n)
{
	int ret = 0;

	if (!w || (!rows && n))
		return -EINVAL;
	while (n) {
		struct writer_row *r = writer_row(w, &ret);
		size_t room, k;

		if (!r)
			return ret;
		room = WRITER_BATCH - w->cur->nslices;
		k = n < room ? n : room;
		memcpy(&w->cur->slices[w->cur->nslices], rows, k * sizeof(*rows));
		r->op = OP_SLICES;
		r->u.slices.first = w->cur->nslices;
		r->u.slices.n = k;
		r->text = NULL;
		w->cur->nslices += k;
		w->cur->n++;
		rows += k;
		n -= k;
	}
	return 0;
}

/* A new row of kind @op carrying a copy of @text (NULL: -EINVAL), its
 * other fields for the caller to fill; NULL with *@ret set on failure. */
static struct writer_row *text_row(struct sptd_store_writer *w, enum writer_op op,
                                   const char *text, int *ret)
{
	struct writer_row *r;

	*ret = -EINVAL;
	if (!w || !text)
		return NULL;
	r = writer_row(w, ret);
	if (!r)
		return NULL;
	r->op = op;
	*ret = writer_queue(w, r, text);
	return *ret < 0 ? NULL : r;
}

int sptd_store_writer_symbol(struct sptd_store_writer *w, int64_t id, const char *name,
                             int64_t dso_id, uint64_t addr, uint64_t size)
{
	int ret;
	struct writer_row *r = text_row(w, OP_SYMBOL, name, &ret);

	if (r) {
		r->u.symbol.id = id;
		r->u.symbol.dso_id = dso_id;
		r->u.symbol.addr = addr;
		r->u.symbol.size = size;
	}
	return ret;
}

int sptd_store_writer_gap(struct sptd_store_writer *w, int64_t ts, int64_t dur, int cpu,
                          const char *reason)
{
	int ret;
	struct writer_row *r = text_row(w, OP_GAP, reason, &ret);

	if (r) {
		r->u.gap.ts = ts;
		r->u.gap.dur = dur;
		r->u.gap.cpu = cpu;
	}
	return ret;
}

int sptd_store_writer_stat(struct sptd_store_writer *w, const char *name, int cpu,
                           int64_t value)
{
	int ret;
	struct writer_row *r = text_row(w, OP_STAT, name, &ret);

	if (r) {
		r->u.stat.cpu = cpu;
		r->u.stat.value = value;
	}
	return ret;
}

int sptd_store_writer_finish(struct sptd_store_writer *w)
{
	struct writer_batch *b;
	int ret;

	if (!w)
		return 0;
	ret = writer_push(w);
	pthread_mutex_lock(&w->lock);
	w->closing = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	if (!ret)
		ret = w->err;
	/* a batch the producer could not push (after a failure) */
	if (w->cur) {
		batch_clear(w->cur);
		free(w->cur);
	}
	while ((b = w->head)) {
		w->head = b->next;
		batch_clear(b);
		free(b);
	}
	while ((b = w->free)) {
		w->free = b->next;
		free(b);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return ret;
}
