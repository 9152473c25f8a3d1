/* pftrace_reader.c — see pftrace_reader.h.  Field numbers are Perfetto's
 * (protos/perfetto/trace/...), written out here independently of query/. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace_reader.h"

/* A cursor over a protobuf message. */
struct cur { const uint8_t *p, *end; int bad; };

/* One field: number, wire type, and its value or bytes. */
struct fld { uint32_t num; int wire; uint64_t v; const uint8_t *b; size_t len; };

static uint64_t rd_varint(struct cur *c)
{
	uint64_t v = 0;
	int shift = 0;

	while (c->p < c->end && shift < 64) {
		uint8_t b = *c->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	c->bad = 1;
	return 0;
}

/* Next field of @c into @f; 0 at the end or on a malformed message. */
static int next(struct cur *c, struct fld *f)
{
	uint64_t key;

	if (c->bad || c->p >= c->end)
		return 0;
	key = rd_varint(c);
	f->num = (uint32_t)(key >> 3);
	f->wire = (int)(key & 7);
	f->b = NULL;
	f->len = 0;
	switch (f->wire) {
	case 0:
		f->v = rd_varint(c);
		break;
	case 1:
	case 5: {
		size_t n = f->wire == 1 ? 8 : 4;

		if ((size_t)(c->end - c->p) < n) {
			c->bad = 1;
			return 0;
		}
		f->v = 0;
		memcpy(&f->v, c->p, n);
		c->p += n;
		break;
	}
	case 2:
		f->len = (size_t)rd_varint(c);
		if (c->bad || f->len > (size_t)(c->end - c->p)) {
			c->bad = 1;
			return 0;
		}
		f->b = c->p;
		c->p += f->len;
		break;
	default:
		c->bad = 1;
		return 0;
	}
	return !c->bad && f->num != 0;
}

static struct cur sub(const struct fld *f)
{
	struct cur c = { f->b, f->b + f->len, 0 };
	return c;
}

static void cpystr(char *dst, size_t n, const struct fld *f)
{
	size_t len = f->len < n - 1 ? f->len : n - 1;

	memcpy(dst, f->b, len);
	dst[len] = '\0';
}

#define GROW(arr, n, cap)                                                        \
	do {                                                                     \
		if ((n) == (cap)) {                                              \
			(cap) = (cap) ? (cap) * 2 : 64;                          \
			(arr) = realloc((arr), (cap) * sizeof(*(arr)));          \
			if (!(arr))                                              \
				abort();                                         \
		}                                                                \
		memset(&(arr)[(n)], 0, sizeof(*(arr)));                          \
	} while (0)

/* Interned strings of one sequence, by kind (0 event names, 1 annotation
 * names, 2 annotation string values). */
struct istr { uint32_t seq; int kind; uint64_t iid; char *s; };
static struct istr *istrs;
static size_t nistrs, capistrs;

/* Strings stay allocated until pft_free (events point at them); a cleared
 * sequence's entries are only made unreachable. */
static void clear_seq(uint32_t seq)
{
	size_t i;

	for (i = 0; i < nistrs; i++)
		if (istrs[i].seq == seq)
			istrs[i].kind = -1;
}

/* Keep a copy of a non-interned string in the pool. */
static const char *pool(const uint8_t *b, size_t len)
{
	char *s = malloc(len + 1);

	memcpy(s, b, len);
	s[len] = '\0';
	GROW(istrs, nistrs, capistrs);
	istrs[nistrs].kind = -1;
	istrs[nistrs].s = s;
	nistrs++;
	return s;
}

/* Open-addressing index over istrs (index + 1; 0 empty), grown at half load. */
static int32_t *ihash;
static size_t ihcap;

static size_t hkey(uint32_t seq, int kind, uint64_t iid)
{
	uint64_t x = iid * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)kind << 40) ^ ((uint64_t)seq << 48);

	x ^= x >> 29;
	return (size_t)x;
}

static void ih_insert(size_t i)
{
	size_t h;

	for (h = hkey(istrs[i].seq, istrs[i].kind, istrs[i].iid) & (ihcap - 1); ihash[h];
	     h = (h + 1) & (ihcap - 1))
		;
	ihash[h] = (int32_t)(i + 1);
}

static void ih_add(size_t i)
{
	if ((i + 1) * 2 > ihcap) {
		size_t k;

		ihcap = ihcap ? ihcap * 2 : 1024;
		while ((i + 1) * 2 > ihcap)
			ihcap *= 2;
		free(ihash);
		ihash = calloc(ihcap, sizeof(*ihash));
		if (!ihash)
			abort();
		for (k = 0; k < i; k++)
			if (istrs[k].kind >= 0)
				ih_insert(k);
	}
	ih_insert(i);
}

static const char *lookup_fast(uint32_t seq, int kind, uint64_t iid)
{
	const char *found = NULL;
	size_t h;

	if (!ihcap)
		return NULL;
	/* the newest definition wins: keep scanning the probe run */
	for (h = hkey(seq, kind, iid) & (ihcap - 1); ihash[h]; h = (h + 1) & (ihcap - 1)) {
		const struct istr *e = &istrs[ihash[h] - 1];

		if (e->seq == seq && e->kind == kind && e->iid == iid)
			found = e->s;
	}
	return found;
}

static void parse_interned(uint32_t seq, const struct fld *f)
{
	struct cur c = sub(f), e;
	struct fld g, h;

	while (next(&c, &g)) {
		int kind = g.num == 2 ? 0 : g.num == 3 ? 1 : g.num == 29 ? 2 : -1;
		uint64_t iid = 0;
		char *s = NULL;

		if (kind < 0 || g.wire != 2)
			continue;
		e = sub(&g);
		while (next(&e, &h)) {
			if (h.num == 1 && h.wire == 0)
				iid = h.v;
			else if (h.num == 2 && h.wire == 2) {
				free(s);
				s = malloc(h.len + 1);
				memcpy(s, h.b, h.len);
				s[h.len] = '\0';
			}
		}
		GROW(istrs, nistrs, capistrs);
		istrs[nistrs].seq = seq;
		istrs[nistrs].kind = kind;
		istrs[nistrs].iid = iid;
		istrs[nistrs].s = s ? s : strdup("");
		ih_add(nistrs);
		nistrs++;
	}
}

static void parse_annotation(struct pftrace *t, struct pft_event *ev, uint32_t seq,
                             const struct fld *f)
{
	struct cur c = sub(f);
	struct fld g;
	const char *name = NULL, *sval = "";
	int64_t ival = 0;
	int has_int = 0, has_bool = 0;

	while (next(&c, &g)) {
		if (g.num == 1) {
			name = lookup_fast(seq, 1, g.v);
			if (!name)
				t->unresolved++;
		} else if (g.num == 17) {
			sval = lookup_fast(seq, 2, g.v);
			if (!sval) {
				t->unresolved++;
				sval = "";
			}
		} else if (g.num == 6 && g.wire == 2) {
			sval = pool(g.b, g.len);
		} else if (g.num == 4) {
			ival = (int64_t)g.v;
			has_int = 1;
		} else if (g.num == 2) {
			has_bool = g.v != 0;
		}
	}
	if (!name)
		return;
	if (!strcmp(name, "symbol"))
		ev->symbol = sval;
	else if (!strcmp(name, "dso"))
		ev->dso = sval;
	else if (!strcmp(name, "kind"))
		ev->kind = sval;
	else if (!strcmp(name, "truncated"))
		ev->truncated = sval;
	else if (!strcmp(name, "detail"))
		ev->detail = sval;
	else if (!strcmp(name, "stack"))
		ev->stack = sval;
	else if (!strcmp(name, "flags") && has_int)
		ev->flags = ival;
	else if (!strcmp(name, "cpu") && has_int)
		ev->cpu = ival;
	else if (!strcmp(name, "inferred"))
		ev->inferred = has_bool;
}

static void parse_track_event(struct pftrace *t, uint32_t seq, int64_t ts,
                              const struct fld *f)
{
	struct cur c = sub(f);
	struct fld g;
	struct pft_event *ev;

	GROW(t->ev, t->nev, t->capev);
	ev = &t->ev[t->nev++];
	ev->seq = seq;
	ev->ts = ts;
	ev->cpu = -1;
	ev->name_resolved = 1;
	ev->name = ev->symbol = ev->dso = ev->kind = ev->truncated = "";
	ev->detail = ev->stack = "";
	while (next(&c, &g)) {
		if (g.num == 9)
			ev->type = (int)g.v;
		else if (g.num == 11)
			ev->track = g.v;
		else if (g.num == 10) {
			const char *s = lookup_fast(seq, 0, g.v);

			if (s)
				ev->name = s;
			else {
				ev->name_resolved = 0;
				t->unresolved++;
			}
		} else if (g.num == 23 && g.wire == 2)
			ev->name = pool(g.b, g.len);
		else if (g.num == 4 && g.wire == 2)
			parse_annotation(t, ev, seq, &g);
	}
}

static void parse_track_descriptor(struct pftrace *t, const struct fld *f)
{
	struct cur c = sub(f), d;
	struct fld g, h;
	struct pft_track *tr;

	GROW(t->tracks, t->ntracks, t->captracks);
	tr = &t->tracks[t->ntracks++];
	while (next(&c, &g)) {
		if (g.num == 1)
			tr->uuid = g.v;
		else if (g.num == 5)
			tr->parent = g.v;
		else if (g.num == 2 && g.wire == 2)
			cpystr(tr->name, sizeof(tr->name), &g);
		else if ((g.num == 3 || g.num == 4) && g.wire == 2) {
			if (g.num == 3)
				tr->has_process = 1;
			else
				tr->has_thread = 1;
			d = sub(&g);
			while (next(&d, &h)) {
				if (h.num == 1)
					tr->pid = (int)h.v;
				else if (g.num == 4 && h.num == 2)
					tr->tid = (int)h.v;
				else if ((g.num == 4 && h.num == 5) || (g.num == 3 && h.num == 6))
					cpystr(tr->thread_name, sizeof(tr->thread_name), &h);
			}
		}
	}
}

/* Elements of a packed varint array (or a single unpacked one). */
static size_t unpack(const struct fld *f, uint64_t **out)
{
	struct cur c;
	size_t n = 0, cap = 64;
	uint64_t *v = malloc(cap * sizeof(*v));

	if (f->wire == 0) {
		v[0] = f->v;
		*out = v;
		return 1;
	}
	c = sub(f);
	while (c.p < c.end && !c.bad) {
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		v[n++] = rd_varint(&c);
	}
	*out = v;
	return n;
}

static void parse_compact(struct pftrace *t, int cpu, const struct fld *f)
{
	struct cur c = sub(f);
	struct fld g;
	uint64_t *a[13] = { 0 };
	size_t n[13] = { 0 }, i;
	char **intern = NULL;
	size_t nintern = 0;
	int64_t ts;

	while (next(&c, &g)) {
		if (g.num == 5 && g.wire == 2) {
			intern = realloc(intern, (nintern + 1) * sizeof(*intern));
			intern[nintern] = malloc(g.len + 1);
			memcpy(intern[nintern], g.b, g.len);
			intern[nintern][g.len] = '\0';
			nintern++;
		} else if (g.num >= 1 && g.num <= 12 && g.num != 5) {
			uint64_t *v;
			size_t m = unpack(&g, &v), k;

			a[g.num] = realloc(a[g.num], (n[g.num] + m) * sizeof(uint64_t));
			for (k = 0; k < m; k++)
				a[g.num][n[g.num] + k] = v[k];
			n[g.num] += m;
			free(v);
		}
	}
	ts = 0;
	for (i = 0; i < n[1]; i++) {
		struct pft_switch *s;
		uint64_t ci = i < n[6] ? a[6][i] : (uint64_t)-1;

		if (a[1][i] > ((uint64_t)1 << 62))
			t->negative_deltas++;
		ts += (int64_t)a[1][i];
		GROW(t->sw, t->nsw, t->capsw);
		s = &t->sw[t->nsw++];
		s->cpu = cpu;
		s->ts = ts;
		s->prev_state = i < n[2] ? (int64_t)a[2][i] : -1;
		s->next_pid = i < n[3] ? (int)a[3][i] : -1;
		s->next_prio = i < n[4] ? (int)a[4][i] : -1;
		if (ci < nintern)
			snprintf(s->comm, sizeof(s->comm), "%s", intern[ci]);
		else
			t->unresolved++;
	}
	ts = 0;
	for (i = 0; i < n[7]; i++) {
		struct pft_waking *w;
		uint64_t ci = i < n[11] ? a[11][i] : (uint64_t)-1;

		if (a[7][i] > ((uint64_t)1 << 62))
			t->negative_deltas++;
		ts += (int64_t)a[7][i];
		GROW(t->wk, t->nwk, t->capwk);
		w = &t->wk[t->nwk++];
		w->cpu = cpu;
		w->ts = ts;
		w->pid = i < n[8] ? (int)a[8][i] : -1;
		w->target_cpu = i < n[9] ? (int)a[9][i] : -1;
		if (ci < nintern)
			snprintf(w->comm, sizeof(w->comm), "%s", intern[ci]);
		else
			t->unresolved++;
	}
	for (i = 0; i < 13; i++)
		free(a[i]);
	for (i = 0; i < nintern; i++)
		free(intern[i]);
	free(intern);
}

static void parse_ftrace_event(struct pftrace *t, int cpu, const struct fld *f)
{
	struct cur c = sub(f), d;
	struct fld g, h;
	struct pft_irq ev;
	int has = 0;

	memset(&ev, 0, sizeof(ev));
	ev.cpu = cpu;
	while (next(&c, &g)) {
		if (g.num == 1) {
			ev.ts = (int64_t)g.v;
		} else if ((g.num == 24 || g.num == 25 || g.num == 36 || g.num == 37) &&
		           g.wire == 2) {
			has = 1;
			ev.kind = g.num == 36 ? PFT_IRQ_ENTRY : g.num == 37 ? PFT_IRQ_EXIT
			        : g.num == 24 ? PFT_SOFT_ENTRY : PFT_SOFT_EXIT;
			d = sub(&g);
			while (next(&d, &h)) {
				if (h.num == 1)
					ev.num = (int)h.v;
				else if (h.num == 2 && h.wire == 2)
					cpystr(ev.name, sizeof(ev.name), &h);
				else if (h.num == 2)
					ev.ret = (int)h.v;
			}
		}
	}
	if (has) {
		GROW(t->irq, t->nirq, t->capirq);
		t->irq[t->nirq++] = ev;
	}
}

static void parse_bundle(struct pftrace *t, const struct fld *f)
{
	struct cur c = sub(f);
	struct fld g;
	int cpu = -1;

	/* cpu first (the writer puts it first; protobuf allows any order) */
	while (next(&c, &g))
		if (g.num == 1)
			cpu = (int)g.v;
	c = sub(f);
	while (next(&c, &g)) {
		if (g.num == 2 && g.wire == 2)
			parse_ftrace_event(t, cpu, &g);
		else if (g.num == 4 && g.wire == 2)
			parse_compact(t, cpu, &g);
	}
}

static void parse_process_tree(struct pftrace *t, const struct fld *f)
{
	struct cur c = sub(f), d;
	struct fld g, h;

	while (next(&c, &g)) {
		if (g.num == 1 && g.wire == 2) {
			struct pft_process *p;
			int got_cmd = 0;

			GROW(t->procs, t->nprocs, t->capprocs);
			p = &t->procs[t->nprocs++];
			d = sub(&g);
			while (next(&d, &h)) {
				if (h.num == 1)
					p->pid = (int)h.v;
				else if (h.num == 3 && !got_cmd) {
					cpystr(p->cmdline0, sizeof(p->cmdline0), &h);
					got_cmd = 1;
				}
			}
		} else if (g.num == 2 && g.wire == 2) {
			struct pft_thread *th;

			GROW(t->threads, t->nthreads, t->capthreads);
			th = &t->threads[t->nthreads++];
			d = sub(&g);
			while (next(&d, &h)) {
				if (h.num == 1)
					th->tid = (int)h.v;
				else if (h.num == 3)
					th->tgid = (int)h.v;
				else if (h.num == 2)
					cpystr(th->name, sizeof(th->name), &h);
			}
		}
	}
}

static void parse_meta(struct pftrace *t, const struct fld *f, int clock)
{
	struct cur c = sub(f), d, e;
	struct fld g, h, k;

	while (next(&c, &g)) {
		if (clock && g.num == 1 && g.wire == 2 && t->nclocks < 8) {
			d = sub(&g);
			while (next(&d, &h)) {
				if (h.num == 1)
					t->clocks[t->nclocks] = (int)h.v;
				else if (h.num == 2)
					t->clock_ts[t->nclocks] = (int64_t)h.v;
			}
			t->nclocks++;
		} else if (clock && g.num == 2) {
			t->primary_clock = (int)g.v;
		} else if (!clock && g.num == 1 && g.wire == 2) {
			e = sub(&g);
			while (next(&e, &k)) {
				if (k.num == 1)
					cpystr(t->sysname, sizeof(t->sysname), &k);
				else if (k.num == 3)
					cpystr(t->release, sizeof(t->release), &k);
			}
		}
	}
}

/* Sequences seen so far (for the SEQ_INCREMENTAL_STATE_CLEARED rule). */
static uint32_t seen_seq[64];
static int nseen;

static void parse_packet(struct pftrace *t, const struct fld *pkt)
{
	struct cur c = sub(pkt);
	struct fld g, te = { 0 }, defaults = { 0 };
	uint32_t seq = 0, flags = 0;
	int64_t ts = 0;
	int has_te = 0, has_defaults = 0, i, known;

	/* header fields first: interning and flags apply to the whole packet */
	while (next(&c, &g)) {
		if (g.num == 10)
			seq = (uint32_t)g.v;
		else if (g.num == 13)
			flags = (uint32_t)g.v;
		else if (g.num == 8)
			ts = (int64_t)g.v;
	}
	for (known = 0, i = 0; i < nseen; i++)
		known |= seen_seq[i] == seq;
	if (seq && !known) {
		if (!(flags & 1))
			t->bad_flags++;
		if (nseen < 64)
			seen_seq[nseen++] = seq;
	}
	if (flags & 1)
		clear_seq(seq);
	c = sub(pkt);
	while (next(&c, &g)) {
		if (g.num == 12 && g.wire == 2)
			parse_interned(seq, &g);
		else if (g.num == 11 && g.wire == 2)
			te = g, has_te = 1;
		else if (g.num == 59 && g.wire == 2)
			defaults = g, has_defaults = 1;
		else if (g.num == 60 && g.wire == 2)
			parse_track_descriptor(t, &g);
		else if (g.num == 1 && g.wire == 2)
			parse_bundle(t, &g);
		else if (g.num == 2 && g.wire == 2)
			parse_process_tree(t, &g);
		else if (g.num == 6 && g.wire == 2)
			parse_meta(t, &g, 1);
		else if (g.num == 45 && g.wire == 2)
			parse_meta(t, &g, 0);
	}
	if (has_defaults) {
		struct cur d = sub(&defaults);

		while (next(&d, &g))
			if (g.num == 58)
				t->default_clock = (int)g.v;
	}
	if (has_te) {
		if (!(flags & 2))
			t->bad_flags++; /* uses interned data: must say so */
		parse_track_event(t, seq, ts, &te);
	}
}

int pft_read(const char *path, struct pftrace *t, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size;
	struct cur c;
	struct fld g;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	nseen = 0;
	if (!f) {
		snprintf(err, errlen, "cannot open %s", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		snprintf(err, errlen, "cannot size %s", path);
		goto out;
	}
	buf = malloc((size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		snprintf(err, errlen, "cannot read %s", path);
		goto out;
	}
	c.p = buf;
	c.end = buf + size;
	c.bad = 0;
	while (next(&c, &g)) {
		if (g.num != 1 || g.wire != 2) {
			snprintf(err, errlen, "Trace field %u wire %d: only `packet = 1` expected",
			         g.num, g.wire);
			goto out;
		}
		parse_packet(t, &g);
		t->packets++;
	}
	if (c.bad || c.p != c.end) {
		snprintf(err, errlen, "malformed protobuf at byte %ld", (long)(c.p - buf));
		goto out;
	}
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

void pft_free(struct pftrace *t)
{
	while (nistrs)
		free(istrs[--nistrs].s);
	free(ihash);
	ihash = NULL;
	ihcap = 0;
	free(t->sw);
	free(t->wk);
	free(t->irq);
	free(t->tracks);
	free(t->ev);
	free(t->threads);
	free(t->procs);
	memset(t, 0, sizeof(*t));
}

const struct pft_track *pft_track(const struct pftrace *t, uint64_t uuid)
{
	size_t i;

	for (i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}
