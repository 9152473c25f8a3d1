/* trigger_irq.c — irq[=NUM|NAME][,min=DUR]: a hard IRQ handler ran.
 *
 * Arms irq:irq_handler_entry and irq:irq_handler_exit on every CPU,
 * filtered in the kernel to the IRQ numbers asked for; NAME and NUM are
 * checked against /proc/interrupts (an IRQ listed there has, or had, a
 * handler; one that is not would never fire).  A trigger fires when the
 * handler returns, so the incident holds the whole handler and the trigger
 * row says how long it took: without min= every exit fires; with it, an
 * exit whose entry on the same CPU came at least min= before.  The
 * kernel's freeze (a traceoff trigger, arm.c) and the PT pause (AUX pause)
 * are on the exit too. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trigger-kind-local.h"

#define IRQ_MAX_NUMBERS 16     /* IRQ numbers one NAME may stand for */

/* The handler entry still open on each CPU, and what fired. */
struct irq_state {
	int64_t *entry_ts;         /* per CPU: entry time, -1 none open */
	int *entry_irq;            /* per CPU: its IRQ */
	char (*entry_name)[64];    /* per CPU: its action name */
	char fired_name[64];       /* the name of the handler that fired last */
	int64_t fired_took;        /* its time, -1 unknown */
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

/* 1 if @path (an "actions" file) names a handler, 0 if it is empty,
 * negative errno if it cannot be read. */
static int actions_named(const char *path)
{
	char buf[256];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf[strspn(buf, " \t\n")] != '\0';
}

int sptd_col_irq_number_check(const char *interrupts_path, const char *sysfs_irq_dir, int irq)
{
	char line[4096], path[4096];
	int found = 0, ret;
	FILE *f;

	if (!interrupts_path || irq < 0)
		return -EINVAL;
	/* /sys/kernel/irq/N exists for every IRQ the kernel has, and its
	 * actions file names the handlers: exact where it is there */
	if (sysfs_irq_dir && access(sysfs_irq_dir, F_OK) == 0) {
		snprintf(path, sizeof(path), "%s/%d/actions", sysfs_irq_dir, irq);
		ret = actions_named(path);
		return ret == -ENOENT || ret == -ENOTDIR ? -ENOENT : ret;
	}
	/* else /proc/interrupts: it lists an IRQ with a handler (or one that
	 * ran before) */
	f = fopen(interrupts_path, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		long num;

		while (isspace((unsigned char)*p))
			p++;
		num = strtol(p, &end, 10);
		found = end != p && *end == ':' && num == irq;
	}
	fclose(f);
	return found ? 1 : -ENOENT;
}

/* The ftrace filter for the IRQs @spec names ("irq==36 || irq==37", "" for
 * any IRQ).  -ENOENT when NAME is in no line of /proc/interrupts or (with
 * @check) there is no IRQ NUM; -ENODATA when IRQ NUM has no handler. */
static int irq_filter(const struct sptd_col_trigger_spec *spec, int check, char *buf, size_t len)
{
	int irqs[IRQ_MAX_NUMBERS], n = 0;
	size_t off = 0;

	buf[0] = '\0';
	if (spec->irq_name[0]) {
		n = sptd_col_irq_lookup("/proc/interrupts", spec->irq_name, irqs, IRQ_MAX_NUMBERS);
		if (n < 0)
			return n;
	} else if (spec->irq >= 0) {
		int has = check ? sptd_col_irq_number_check("/proc/interrupts", "/sys/kernel/irq",
		                                            spec->irq) : 1;

		if (has <= 0)
			return has < 0 ? -ENOENT : -ENODATA;
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
	st->entry_ts = malloc(sizeof(*st->entry_ts) * (size_t)(t->max_cpu + 1));
	st->entry_irq = malloc(sizeof(*st->entry_irq) * (size_t)(t->max_cpu + 1));
	st->entry_name = calloc((size_t)(t->max_cpu + 1), sizeof(*st->entry_name));
	if (!st->entry_ts || !st->entry_irq || !st->entry_name)
		return -ENOMEM;
	for (int c = 0; c <= t->max_cpu; c++)
		st->entry_ts[c] = -1;
	return 0;
}

static int irq_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err, size_t errlen)
{
	struct irq_state *st = t->kind_state;
	char filter[512];
	int ret = irq_filter(&t->spec, 1, filter, sizeof(filter));

	if (ret < 0 && t->spec.irq_name[0]) {
		snprintf(err, errlen, "no IRQ named '%s' in /proc/interrupts (use a name from its "
		         "last column, or irq=NUMBER)", t->spec.irq_name);
		return -ENOENT;
	}
	if (ret == -ENODATA) {
		snprintf(err, errlen, "IRQ %d has no handler (no driver has requested it), so it "
		         "never runs (to wait for it anyway: --trigger "
		         "'tracepoint=irq:irq_handler_exit,filter=irq==%d')", t->spec.irq, t->spec.irq);
		return -ENOENT;
	}
	if (ret < 0) {
		snprintf(err, errlen, "no IRQ %d in /proc/interrupts (use a number from its first "
		         "column, or irq=NAME)", t->spec.irq);
		return -ENOENT;
	}
	if (sptd_col_trigger_events_field("irq", "irq_handler_entry", "irq", &st->off_irq, err, errlen) < 0 ||
	    sptd_col_trigger_events_field("irq", "irq_handler_entry", "name", &st->off_name, err, errlen) < 0)
		return -ENOENT;
	ret = sptd_col_trigger_events_tracepoint(t, "irq", "irq_handler_entry", filter,
	                                         SPTD_TRIG_ROLE_HIT, 0, cpus, ncpus, err, errlen);
	if (ret < 0)
		return ret;
	/* the exit fires: PT pauses there (where every exit fires) */
	return sptd_col_trigger_events_tracepoint(t, "irq", "irq_handler_exit", filter,
	                                          SPTD_TRIG_ROLE_IRQ_EXIT, SPTD_TRIG_EV_PAUSE, cpus,
	                                          ncpus, err, errlen);
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
	int64_t entry;

	if (h->cpu < 0 || h->cpu > t->max_cpu)
		return 0;
	if (h->role == SPTD_TRIG_ROLE_HIT) {
		st->entry_ts[h->cpu] = h->ts;
		st->entry_irq[h->cpu] = h->irq;
		snprintf(st->entry_name[h->cpu], sizeof(st->entry_name[h->cpu]), "%s", h->name);
		return 0;
	}
	entry = st->entry_ts[h->cpu];
	st->entry_ts[h->cpu] = -1;
	if (entry < 0 || st->entry_irq[h->cpu] != h->irq || h->ts < entry) {
		/* its entry was not seen (before arming, or lost): it ran,
		 * for how long is not known */
		*measure = -1;
		st->fired_name[0] = '\0';
		st->fired_took = -1;
		return t->spec.min_ns <= 0;
	}
	*measure = h->ts - entry;
	snprintf(st->fired_name, sizeof(st->fired_name), "%s", st->entry_name[h->cpu]);
	st->fired_took = *measure;
	return *measure >= t->spec.min_ns;
}

/* Perf's own entry and exit samples time the handler a few microseconds
 * apart from ftrace's (another probe, another clock read; 6119 ns against
 * the irq_slice's 4544): the capture makes the trigger ftrace's return of
 * this IRQ on this CPU (freeze_scan.c), so the row and the slice are one
 * measurement. */
static void irq_fill(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                     struct sptd_col_fire *fire)
{
	const struct irq_state *st = t->kind_state;

	fire->measured = 1;
	fire->subject = h->irq;
	fire->measure = st->fired_took;
}

static void irq_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                         int64_t measure, char *buf, size_t len)
{
	const struct irq_state *st = t->kind_state;

	if (measure < 0)
		snprintf(buf, len, "irq %d handler returned (its entry was not seen)", h->irq);
	else
		snprintf(buf, len, "irq %d%s%s handler took %" PRId64 " ns", h->irq,
		         st->fired_name[0] ? " " : "", st->fired_name, measure);
}

/* Without min= the kernel can freeze ftrace at the handler's exit, the
 * event that fires; with it, only the duration decides, which ftrace's
 * filter cannot see. */
static int irq_freeze_point(const struct sptd_col_trigger_spec *spec, char *system, size_t syslen,
                            char *event, size_t evlen, char *filter, size_t filterlen)
{
	if (spec->min_ns != 0)
		return 0;
	snprintf(system, syslen, "irq");
	snprintf(event, evlen, "irq_handler_exit");
	/* the IRQ was checked when the trigger was armed */
	if (irq_filter(spec, 0, filter, filterlen) < 0)
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
	free(st->entry_name);
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
	.fill = irq_fill,
	.describe = irq_describe,
	.freeze_point = irq_freeze_point,
	.fini = irq_fini,
};
