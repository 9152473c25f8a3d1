/* trigger_irq.c — irq[=NUM|NAME][,min=DUR]: a hard IRQ handler ran.
 *
 * Arms irq:irq_handler_entry on every CPU (and irq_handler_exit with min=),
 * filtered in the kernel to the IRQ numbers asked for; NAME is resolved
 * through /proc/interrupts.  Without min= every entry fires; with it, an
 * exit fires when its entry on the same CPU came at least min= before. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger-kind-local.h"

#define IRQ_MAX_NUMBERS 16     /* IRQ numbers one NAME may stand for */

/* irq min=: the handler entry still open on each CPU. */
struct irq_state {
	int64_t *entry_ts;         /* per CPU: entry time, -1 none open */
	int *entry_irq;            /* per CPU: its IRQ */
	int off_irq, off_name;     /* raw offsets: irq, __data_loc name */
};

int sptd_col_irq_lookup(const char *interrupts_path, const char *name, int *irqs, int max)
{
	char line[4096];
	int found = 0;
	FILE *f;

	if (!interrupts_path || !name || !*name || !irqs || max <= 0)
		return -EINVAL;
	f = fopen(interrupts_path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end, *tok, *save = NULL;
		long num;

		while (isspace((unsigned char)*p))
			p++;
		num = strtol(p, &end, 10);
		if (end == p || *end != ':')
			continue; /* NMI:, LOC: and the CPU header */
		/* The action names are the last column(s): match any token,
		 * whole word, ignoring a trailing comma (shared IRQs). */
		for (tok = strtok_r(end + 1, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
			size_t len = strlen(tok);

			if (len && tok[len - 1] == ',')
				tok[--len] = '\0';
			if (strcmp(tok, name) == 0) {
				if (found < max)
					irqs[found] = (int)num;
				found++;
				break;
			}
		}
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	return found < max ? found : max;
}

/* The ftrace filter for the IRQs @spec names ("irq==36 || irq==37", "" for
 * any IRQ).  -ENOENT when NAME is in no line of /proc/interrupts. */
static int irq_filter(const struct sptd_col_trigger_spec *spec, char *buf, size_t len)
{
	int irqs[IRQ_MAX_NUMBERS], n = 0;
	size_t off = 0;

	buf[0] = '\0';
	if (spec->irq_name[0]) {
		n = sptd_col_irq_lookup("/proc/interrupts", spec->irq_name, irqs, IRQ_MAX_NUMBERS);
		if (n < 0)
			return n;
	} else if (spec->irq >= 0) {
		irqs[n++] = spec->irq;
	}
	for (int i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%sirq==%d", i ? " || " : "", irqs[i]);
	return 0;
}

static int irq_every_hit(const struct sptd_col_trigger_spec *spec)
{
	return spec->min_ns <= 0;
}

static int irq_init(struct sptd_col_trigger *t)
{
	struct irq_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	t->kind_state = st;
	st->off_irq = st->off_name = -1;
	if (t->spec.min_ns <= 0)
		return 0;
	st->entry_ts = malloc(sizeof(*st->entry_ts) * (size_t)(t->max_cpu + 1));
	st->entry_irq = malloc(sizeof(*st->entry_irq) * (size_t)(t->max_cpu + 1));
	if (!st->entry_ts || !st->entry_irq)
		return -ENOMEM;
	for (int c = 0; c <= t->max_cpu; c++)
		st->entry_ts[c] = -1;
	return 0;
}

static int irq_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err, size_t errlen)
{
	struct irq_state *st = t->kind_state;
	char filter[512];
	int ret = irq_filter(&t->spec, filter, sizeof(filter));

	if (ret < 0) {
		snprintf(err, errlen, "no IRQ named '%s' in /proc/interrupts (use a name from its last column, or irq=NUMBER)",
		         t->spec.irq_name);
		return ret;
	}
	if (sptd_col_trigger_events_field("irq", "irq_handler_entry", "irq", &st->off_irq, err, errlen) < 0 ||
	    sptd_col_trigger_events_field("irq", "irq_handler_entry", "name", &st->off_name, err, errlen) < 0)
		return -ENOENT;
	ret = sptd_col_trigger_events_tracepoint(t, "irq", "irq_handler_entry", filter,
	                                         SPTD_TRIG_ROLE_HIT, SPTD_TRIG_EV_PAUSE, cpus, ncpus,
	                                         err, errlen);
	if (ret < 0 || t->spec.min_ns <= 0)
		return ret;
	return sptd_col_trigger_events_tracepoint(t, "irq", "irq_handler_exit", filter,
	                                          SPTD_TRIG_ROLE_IRQ_EXIT, 0, cpus, ncpus, err, errlen);
}

static void irq_decode(const struct sptd_col_trigger *t, const unsigned char *raw, uint32_t size,
                       struct sptd_col_trigger_hit *h)
{
	const struct irq_state *st = t->kind_state;
	uint32_t loc, off, len;

	h->irq = sptd_col_trigger_raw_i32(raw, size, st->off_irq);
	if (h->role != SPTD_TRIG_ROLE_HIT)
		return;
	loc = (uint32_t)sptd_col_trigger_raw_i32(raw, size, st->off_name);
	off = loc & 0xffff;
	len = loc >> 16;
	if (off < size && len && off + len <= size) {
		size_t n = len < sizeof(h->name) ? len : sizeof(h->name) - 1;

		memcpy(h->name, raw + off, n);
		h->name[n] = '\0';
	}
}

static int irq_decide(struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                      int64_t *measure)
{
	struct irq_state *st = t->kind_state;
	int64_t took;

	if (t->spec.min_ns <= 0)
		return 1;
	if (h->cpu < 0 || h->cpu > t->max_cpu)
		return 0;
	if (h->role == SPTD_TRIG_ROLE_HIT) {
		st->entry_ts[h->cpu] = h->ts;
		st->entry_irq[h->cpu] = h->irq;
		return 0;
	}
	if (st->entry_ts[h->cpu] < 0)
		return 0;
	took = h->ts - st->entry_ts[h->cpu];
	st->entry_ts[h->cpu] = -1;
	*measure = took;
	return took >= t->spec.min_ns;
}

static void irq_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                         int64_t measure, char *buf, size_t len)
{
	if (t->spec.min_ns <= 0)
		snprintf(buf, len, "irq %d %s", h->irq, h->name);
	else
		snprintf(buf, len, "irq %d handler took %" PRId64 " ns", h->irq, measure);
}

/* Without min= the kernel can freeze ftrace at the handler's entry; with
 * it, only the exit knows, too late. */
static int irq_freeze_point(const struct sptd_col_trigger_spec *spec, char *system, size_t syslen,
                            char *event, size_t evlen, char *filter, size_t filterlen)
{
	if (spec->min_ns != 0)
		return 0;
	snprintf(system, syslen, "irq");
	snprintf(event, evlen, "irq_handler_entry");
	if (irq_filter(spec, filter, filterlen) < 0)
		filter[0] = '\0';
	return 1;
}

static void irq_fini(struct sptd_col_trigger *t)
{
	struct irq_state *st = t->kind_state;

	if (!st)
		return;
	free(st->entry_ts);
	free(st->entry_irq);
	free(st);
	t->kind_state = NULL;
}

const struct sptd_col_trigger_ops sptd_col_trigger_irq_ops = {
	.kind = SPTD_TRIG_IRQ,
	.every_hit = irq_every_hit,
	.init = irq_init,
	.arm = irq_arm,
	.decode = irq_decode,
	.decide = irq_decide,
	.describe = irq_describe,
	.freeze_point = irq_freeze_point,
	.fini = irq_fini,
};
