/* trigger_uprobe.c — uprobe=PATH:SYMBOL: any process executes that
 * function.  The uprobe PMU places the probe by file offset, which the
 * ELF's symbols and program headers give (decode/ reads them); every hit
 * fires. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sptd_col_perf.h"
#include "sptd_dec.h"
#include "trigger-kind-local.h"

#define UPROBE_PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"

static int uprobe_every_hit(const struct sptd_col_trigger_spec *spec)
{
	(void)spec;
	return 1;
}

/* The file offset of @spec's function.  -ENOENT, -EINVAL (@err says why). */
static int uprobe_offset(const struct sptd_col_trigger_spec *spec, uint64_t *offset, char *err,
                         size_t errlen)
{
	struct sptd_dec_symfile *sf = NULL;
	struct sptd_dec_sym sym;
	int ret = sptd_dec_symfile_load_elf(spec->path, &sf);

	if (ret < 0) {
		snprintf(err, errlen, "cannot read ELF symbols of %s: %s", spec->path,
		         ret == -ENOENT ? "no such file" : ret == -EBADMSG ? "not an ELF file" :
		         sptd_dec_file_strerror(ret));
		/* the uprobe target is opened as a user's file (sptd_dec_file_open):
		 * a FIFO or device there is refused at once, never waited on */
		return ret == -EBADMSG || ret == -ENXIO || ret == -EISDIR ? -EINVAL : ret;
	}
	ret = sptd_dec_symfile_find(sf, spec->symbol, &sym);
	if (ret == 0)
		ret = sptd_dec_symfile_offset(sf, sym.addr, offset);
	sptd_dec_symfile_destroy(sf);
	if (ret < 0) {
		snprintf(err, errlen, ret == -ENOTUNIQ ? "several functions named '%s' in %s" :
		         "no function '%s' in the symbols of %s (stripped? see nm -D)", spec->symbol, spec->path);
		return ret == -ENOTUNIQ ? -EINVAL : -ENOENT;
	}
	return 0;
}

static int uprobe_arm(struct sptd_col_trigger *t, const int *cpus, int ncpus, char *err,
                      size_t errlen)
{
	uint64_t offset = 0;
	char buf[64];
	int ret;

	if (sptd_col_sys.read_file(UPROBE_PMU_TYPE, buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		return -EOPNOTSUPP;
	}
	ret = uprobe_offset(&t->spec, &offset, err, errlen);
	if (ret < 0)
		return ret;
	/* t->spec.path lives as long as the trigger: attr.config1 points at it */
	return sptd_col_trigger_events_uprobe(t, (uint32_t)atoi(buf), t->spec.path, t->spec.symbol,
	                                      offset, cpus, ncpus, err, errlen);
}

static void uprobe_describe(const struct sptd_col_trigger *t, const struct sptd_col_trigger_hit *h,
                            int64_t measure, char *buf, size_t len)
{
	(void)h;
	(void)measure;
	snprintf(buf, len, "uprobe %.180s:%.60s", t->spec.path, t->spec.symbol);
}

const struct sptd_col_trigger_ops sptd_col_trigger_uprobe_ops = {
	.kind = SPTD_TRIG_UPROBE,
	.every_hit = uprobe_every_hit,
	.arm = uprobe_arm,
	.describe = uprobe_describe,
};
