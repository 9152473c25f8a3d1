/* test_dec_cr3check.c — the PIP/CR3 cross-check (decode/cr3check.c): a CR3
 * binds to the process running at its first sight, a bound CR3 under another
 * process is a mismatch, reported once per stretch between two switches. */
#include <errno.h>
#include <stdint.h>

#include "flow-local.h"
#include "sptd_test.h"

int main(void)
{
	struct sptd_dec_cr3check c = { 0 };
	int bound = -1;
	uint64_t cr3;

	/* first sight binds; the same process again is fine */
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 10, 0, &bound), 0);
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 10, 0, &bound), 0);
	CHECK_INT(c.n, 1);
	/* another process with that CR3: a mismatch, once per stretch */
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 20, 3, &bound), 1);
	CHECK_INT(bound, 10);
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 20, 3, &bound), 0);
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 20, 4, &bound), 1);
	/* a new CR3 binds to whoever runs, even right after a mismatch */
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x2000, 20, 4, &bound), 0);
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x2000, 20, 5, &bound), 0);
	bound = -1;
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x2000, 10, 6, &bound), 1);
	CHECK_INT(bound, 20);
	/* the bindings stay the first ones: 0x1000 is still pid 10's */
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x1000, 10, 7, &bound), 0);
	/* many CR3s (the list grows), each keeps its process */
	for (cr3 = 0x10000; cr3 < 0x10000 + 100 * 0x1000; cr3 += 0x1000)
		CHECK_INT(sptd_dec_cr3check_see(&c, cr3, (int)(cr3 >> 12), 8, &bound), 0);
	CHECK_INT(c.n, 102);
	CHECK_INT(sptd_dec_cr3check_see(&c, 0x10000 + 50 * 0x1000, 99, 9, &bound), 1);
	CHECK_INT(bound, 0x10 + 50);
	sptd_dec_cr3check_fini(&c);
	CHECK(c.cr3s == NULL && c.n == 0 && c.flagged == 0);
	sptd_dec_cr3check_fini(&c);
	sptd_dec_cr3check_fini(NULL);
	return SPTD_TEST_END();
}
