/* hotplug.c — the online CPUs changed while the service records.
 *
 * A per-CPU perf event does not come back when its CPU goes offline and
 * online again (seen on Linux 6.18: a busy CPU had no sample any more
 * after the round trip), and a CPU that comes online later has none at
 * all.  So about once a second the service compares the kernel's list of
 * online CPUs with the one it armed on; when it changed, it disarms and
 * arms again on the CPUs now online (those of --cpu that are), the rings
 * starting empty: the history before the change is lost, a CPU is not. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "record-local.h"

#define HOTPLUG_CHECK_NS 1000000000LL
#define ONLINE_PATH "/sys/devices/system/cpu/online"

/* The kernel's online list as text ("0-3,5"), "" when unreadable. */
static void online_text(char *buf, size_t len)
{
	ssize_t n = sptd_col_sys.read_file(ONLINE_PATH, buf, len);

	if (n < 0) {
		buf[0] = '\0';
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
}

void sptd_col_record_hotplug_note(struct sptd_col_service *s)
{
	online_text(s->online_text, sizeof(s->online_text));
	s->online_checked = sptd_col_now_ns();
}

int sptd_col_record_cpus_listed(const char *list, const int *on, int non, int *out,
                                int *offline)
{
	static int want[SPTD_MAX_CPUS];
	int nwant = sptd_col_cpus_parse(list, want, SPTD_MAX_CPUS), n = 0;

	*offline = -1;
	if (nwant <= 0)
		return -EINVAL;
	for (int i = 0; i < nwant; i++) {
		int is_on = 0, dup = 0;

		for (int k = 0; k < non; k++)
			is_on |= on[k] == want[i];
		for (int k = 0; k < n; k++)
			dup |= out[k] == want[i];
		if (!is_on && *offline < 0)
			*offline = want[i];
		if (is_on && !dup)
			out[n++] = want[i];
	}
	return n;
}

/* The CPUs to record now, from the online list @text: those online, of
 * --cpu's when given.  Their count (0: none of --cpu's is online), or
 * -errno; *@online gets how many are online. */
static int pick_cpus(const struct sptd_col_service *s, const char *text, int *cpus, int *online)
{
	static int on[SPTD_MAX_CPUS];
	int non = sptd_col_cpus_parse(text, on, SPTD_MAX_CPUS), offline;

	if (non <= 0)
		return non < 0 ? non : -ENODEV;
	*online = non;
	if (!s->o->cpu_list[0]) {
		memcpy(cpus, on, (size_t)non * sizeof(*cpus));
		return non;
	}
	return sptd_col_record_cpus_listed(s->o->cpu_list, on, non, cpus, &offline);
}

int sptd_col_record_hotplug(struct sptd_col_service *s, int64_t now)
{
	static int cpus[SPTD_MAX_CPUS];
	char text[sizeof(s->online_text)];
	int n, online = 0, same, ret;

	if (now - s->online_checked < HOTPLUG_CHECK_NS)
		return 0;
	s->online_checked = now;
	online_text(text, sizeof(text));
	if (!text[0] || strcmp(text, s->online_text) == 0)
		return 0;
	n = pick_cpus(s, text, cpus, &online);
	if (n < 0)
		return 0;   /* unreadable now: look again in a second */
	same = n == s->ncpus && memcmp(cpus, s->cpus, (size_t)n * sizeof(*cpus)) == 0;
	if (same || n == 0) {
		/* a CPU outside --cpu; or none of --cpu's is online: keep
		 * what is armed (nothing runs there) until one comes back */
		if (n == 0)
			sptd_col_log(LOG_WARNING, "online CPUs now %s: none of --cpu %s is online; "
			             "recording resumes when one is", text, s->o->cpu_list);
		else
			s->online_cpus = online;
		snprintf(s->online_text, sizeof(s->online_text), "%s", text);
		return 0;
	}
	sptd_col_log(LOG_NOTICE, "online CPUs changed (%s, were %s): arming again on %d CPUs, "
	             "the rings starting empty (a CPU's perf events do not survive it going "
	             "offline)", text, s->online_text, n);
	sptd_col_record_disarm(s);
	memcpy(s->cpus, cpus, (size_t)n * sizeof(*cpus));
	s->ncpus = n;
	s->online_cpus = online;
	s->cpumask[0] = '\0';
	if (s->o->cpu_list[0] &&
	    sptd_col_cpumask_hex(s->cpus, s->ncpus, s->cpumask, sizeof(s->cpumask)) < 0)
		return -E2BIG;
	snprintf(s->online_text, sizeof(s->online_text), "%s", text);
	ret = sptd_col_record_arm(s);
	if (ret >= 0)
		s->ftrace_why = "armed again after the online CPUs changed";
	return ret < 0 ? ret : 1;
}
