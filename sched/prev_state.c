/* prev_state.c — sched_switch's prev_state number -> "R", "R+", "S", "D"...
 *
 * The bit values change between kernels, so they are read from the
 * __print_flags() table in the sched_switch print fmt that was captured with
 * the pages.  The "+" (preempted while runnable) bit is not in that table;
 * in every kernel layout so far it is the bit just above the highest flag
 * (TASK_REPORT_MAX on >= 4.14, TASK_STATE_MAX before), so that is used.
 * Also the softirq vector names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched-local.h"

/* Linux 4.14 .. 6.x layout, used when the format has no __print_flags. */
static const struct {
	uint64_t value;
	const char *letter;
} fallback_states[] = {
	{ 0x01, "S" }, { 0x02, "D" }, { 0x04, "T" }, { 0x08, "t" },
	{ 0x10, "X" }, { 0x20, "Z" }, { 0x40, "P" }, { 0x80, "I" },
};

static void state_map_fallback(struct sptd_sched_state_map *map)
{
	size_t i;

	memset(map, 0, sizeof(*map));
	for (i = 0; i < sizeof(fallback_states) / sizeof(fallback_states[0]); i++) {
		map->value[i] = fallback_states[i].value;
		snprintf(map->letter[i], sizeof(map->letter[i]), "%s", fallback_states[i].letter);
		map->mask |= fallback_states[i].value;
	}
	map->nr = (int)i;
	map->preempt_bit = 0x100;
}

/* Parse `{ VALUE, "LETTERS" }` pairs after "__print_flags(" up to its end. */
static int state_map_parse(struct sptd_sched_state_map *map, const char *format)
{
	const char *p = strstr(format, "__print_flags(");
	uint64_t highest = 0;

	memset(map, 0, sizeof(*map));
	if (!p)
		return 0;
	p += strlen("__print_flags(");
	while (map->nr < 16) {
		const char *brace = strchr(p, '{');
		const char *close = strchr(p, ')');
		const char *q1, *q2;
		char *end;
		uint64_t v;
		size_t len;

		/* a ')' before the next '{' ends the table (expressions inside
		 * the first argument have their ')' before the first '{' too,
		 * so only stop once a pair was found) */
		if (!brace || (close && close < brace && map->nr > 0))
			break;
		p = brace + 1;
		while (*p == ' ')
			p++;
		v = strtoull(p, &end, 0);
		if (end == p)
			break;
		q1 = strchr(end, '"');
		if (!q1)
			break;
		q2 = strchr(q1 + 1, '"');
		if (!q2)
			break;
		len = (size_t)(q2 - q1 - 1);
		if (len == 0 || len >= sizeof(map->letter[0]) || v == 0)
			break;
		map->value[map->nr] = v;
		memcpy(map->letter[map->nr], q1 + 1, len);
		map->letter[map->nr][len] = '\0';
		map->mask |= v;
		if (v > highest)
			highest = v;
		map->nr++;
		p = q2 + 1;
	}
	if (map->nr == 0)
		return 0;
	map->preempt_bit = highest << 1;
	return 1;
}

int sptd_sched_state_map_init(struct sptd_sched_state_map *map, const char *format)
{
	if (format && state_map_parse(map, format))
		return 1;
	state_map_fallback(map);
	return 0;
}

void sptd_sched_state_format(const struct sptd_sched_state_map *map, uint64_t value,
                             char out[4])
{
	const char *letter = "R";
	uint64_t lowest = 0;
	int i;

	if (value & map->mask) {
		letter = "?";
		for (i = 0; i < map->nr; i++) {
			if ((value & map->value[i]) &&
			    (lowest == 0 || map->value[i] < lowest)) {
				lowest = map->value[i];
				letter = map->letter[i];
			}
		}
	}
	snprintf(out, 4, "%.2s%s", letter, (value & map->preempt_bit) ? "+" : "");
}

struct sptd_sched_states {
	struct sptd_sched_state_map map;
};

int sptd_sched_states_create(const char *format, struct sptd_sched_states **out)
{
	struct sptd_sched_states *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	sptd_sched_state_map_init(&s->map, format);
	return 0;
}

void sptd_sched_states_letters(const struct sptd_sched_states *s, uint64_t value, char out[4])
{
	sptd_sched_state_format(&s->map, value, out);
}

void sptd_sched_states_destroy(struct sptd_sched_states *s)
{
	free(s);
}

const char *sptd_sched_softirq_name(int vec)
{
	/* include/linux/interrupt.h, stable since 4.x */
	static const char *const names[] = {
		"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK",
		"IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
	};

	if (vec < 0 || vec >= (int)(sizeof(names) / sizeof(names[0])))
		return "?";
	return names[vec];
}
