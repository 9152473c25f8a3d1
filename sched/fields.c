/* fields.c — where a tracepoint's fields sit in its raw record, read from
 * the event's format file, for code that reads raw tracepoint samples
 * (perf PERF_SAMPLE_RAW) without a full libtraceevent parse. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>

#include "sched-local.h"
#include "sptd_sched.h"

int sptd_sched_event_field(const char *system, const char *event, const char *field,
                           int *offset, int *size)
{
	char path[PATH_MAX], line[512];
	const char *dir;
	size_t flen;
	int ret = -ENOENT;
	FILE *f;

	if (!sptd_sched_name_ok(system) || !sptd_sched_name_ok(event) || !field || !*field ||
	    !offset || !size)
		return -EINVAL;
	dir = tracefs_tracing_dir();
	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, system, event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	flen = strlen(field);
	/* "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;" */
	while (fgets(line, sizeof(line), f)) {
		char *decl = strstr(line, "field:");
		char *semi, *bracket, *name, *end, *off, *sz;

		if (!decl || !(semi = strchr(decl, ';')))
			continue;
		*semi = '\0';
		/* drop array brackets, wherever they are: "char prev_comm[16]",
		 * "__data_loc char[] name" */
		while ((bracket = strchr(decl, '['))) {
			char *close = strchr(bracket, ']');

			if (!close)
				break;
			memmove(bracket, close + 1, strlen(close + 1) + 1);
		}
		end = decl + strlen(decl);
		while (end > decl && end[-1] == ' ')
			*--end = '\0';
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl + 6;
		if (strlen(name) != flen || strcmp(name, field) != 0)
			continue;
		off = strstr(semi + 1, "offset:");
		sz = strstr(semi + 1, "size:");
		if (!off || !sz)
			break;
		*offset = atoi(off + 7);
		*size = atoi(sz + 5);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}
