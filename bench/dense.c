/* dense.c — the program behind the dense single-CPU PT benchmark
 * (bench/bench-import.sh): real work with many calls and branches, the
 * way an interpreter spends its time.  A small bytecode machine runs a
 * loop that calls "native" functions (a string hash, a hash-table insert
 * and lookup, an insertion sort of a small array, a recursive evaluator),
 * over and over.  Built as a PIE and run under sptd-ptgen, its user code
 * becomes PT with exact ground truth.
 *
 * Usage: dense [ROUNDS]  (default: run until killed; sptd-ptgen stops it
 * at --max-insns).  Exit status 0. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

enum op { OP_PUSH, OP_ADD, OP_MUL, OP_HASH, OP_PUT, OP_GET, OP_SORT, OP_EVAL, OP_JNZ,
          OP_DEC, OP_DUP, OP_POP, OP_HALT };

/* One bytecode instruction. */
struct insn {
	enum op op;   /* what to do */
	int64_t arg;  /* its operand */
};

/* A chained hash table of integers. */
struct entry {
	uint64_t key, value;
	struct entry *next;
};

#define BUCKETS 64
#define POOL 512

static struct entry *buckets[BUCKETS];
static struct entry pool[POOL];
static unsigned pool_next;
static volatile uint64_t sink;

NOINLINE static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed)
{
	uint64_t h = 1469598103934665603ull ^ seed;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

NOINLINE static struct entry *table_find(uint64_t key)
{
	struct entry *e;

	for (e = buckets[key % BUCKETS]; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

NOINLINE static void table_put(uint64_t key, uint64_t value)
{
	struct entry *e = table_find(key);

	if (e) {
		e->value = value;
		return;
	}
	if (pool_next == POOL) {
		memset(buckets, 0, sizeof(buckets));
		pool_next = 0;
	}
	e = &pool[pool_next++];
	e->key = key;
	e->value = value;
	e->next = buckets[key % BUCKETS];
	buckets[key % BUCKETS] = e;
}

NOINLINE static uint64_t table_get(uint64_t key)
{
	struct entry *e = table_find(key);

	return e ? e->value : 0;
}

NOINLINE static int less(int64_t a, int64_t b)
{
	return a < b;
}

NOINLINE static void sort_small(int64_t *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++) {
		int64_t x = v[i];

		for (j = i; j > 0 && less(x, v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

NOINLINE static int64_t eval(int depth, int64_t x)
{
	if (depth == 0)
		return x & 0xff;
	if (x & 1)
		return eval(depth - 1, x >> 1) + 1;
	return eval(depth - 1, x >> 1) * 2;
}

/* Run @code once; returns what is left on the stack. */
NOINLINE static int64_t run(const struct insn *code)
{
	int64_t stack[64], v[8];
	char text[32];
	int sp = 0, pc = 0, i;

	for (;;) {
		const struct insn *in = &code[pc++];

		switch (in->op) {
		case OP_PUSH:
			stack[sp++] = in->arg;
			break;
		case OP_ADD:
			sp--;
			stack[sp - 1] += stack[sp];
			break;
		case OP_MUL:
			sp--;
			stack[sp - 1] *= stack[sp];
			break;
		case OP_HASH:
			for (i = 0; i < (int)sizeof(text); i++)
				text[i] = (char)('a' + (stack[sp - 1] + i) % 26);
			stack[sp - 1] = (int64_t)hash_bytes(text, sizeof(text), (uint64_t)in->arg);
			break;
		case OP_PUT:
			table_put((uint64_t)stack[sp - 1], (uint64_t)in->arg);
			break;
		case OP_GET:
			stack[sp - 1] += (int64_t)table_get((uint64_t)stack[sp - 1]);
			break;
		case OP_SORT:
			for (i = 0; i < 8; i++)
				v[i] = (stack[sp - 1] >> (i * 5)) & 0x3ff;
			sort_small(v, 8);
			stack[sp - 1] ^= v[0] + v[7];
			break;
		case OP_EVAL:
			stack[sp - 1] = eval((int)in->arg, stack[sp - 1]);
			break;
		case OP_JNZ:
			if (stack[sp - 1])
				pc = (int)in->arg;
			break;
		case OP_DEC:
			stack[sp - 1]--;
			break;
		case OP_DUP:
			stack[sp] = stack[sp - 1];
			sp++;
			break;
		case OP_POP:
			sp--;
			break;
		case OP_HALT:
			return sp ? stack[sp - 1] : 0;
		}
	}
}

int main(int argc, char **argv)
{
	/* counter; loop: x = counter * 7 + 3; hash; put; get; sort; eval; ... */
	static const struct insn code[] = {
		{ OP_PUSH, 50 },
		/* 1: */ { OP_DUP, 0 }, { OP_PUSH, 7 }, { OP_MUL, 0 }, { OP_PUSH, 3 }, { OP_ADD, 0 },
		{ OP_HASH, 17 }, { OP_PUT, 5 }, { OP_GET, 0 }, { OP_SORT, 0 }, { OP_EVAL, 12 },
		{ OP_POP, 0 }, { OP_DEC, 0 }, { OP_JNZ, 1 }, { OP_HALT, 0 },
	};
	long rounds = argc > 1 ? atol(argv[1]) : -1, r;

	for (r = 0; rounds < 0 || r < rounds; r++)
		sink += (uint64_t)run(code);
	return 0;
}
