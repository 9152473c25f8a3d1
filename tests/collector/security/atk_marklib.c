/* atk_marklib.c — the library of the path-swap attacks (issue 28 items 1
 * and 2), built twice with names and bytes of the same length, so that
 * both copies have one layout: the attacker's own copy (atk_spin_public_0001,
 * "SPTD-USER-PUBLIC-28") and the root-only file (atk_SECRET_root_0001,
 * "SPTD-ROOT-SECRET-28").  Linked without a build-id: the recorder has
 * nothing but the file itself to tell them apart.  A symbol of the second,
 * or its marker bytes, in an incident is a read of a file the user cannot
 * read. */
#ifndef ATK_MARK
#error "ATK_MARK names the spinning function"
#endif
#ifndef ATK_BYTES
#error "ATK_BYTES is the marker string"
#endif

/* The marker bytes, kept in the file (used, so that no linker drops it). */
__attribute__((used)) const char atk_marker[] = ATK_BYTES;

/* Spins for ever, where the samples fall. */
void ATK_MARK(void);
__attribute__((noinline)) void ATK_MARK(void)
{
	volatile unsigned long n = 0;

	for (;;)
		n += atk_marker[n % (sizeof(atk_marker) - 1)];
}
