/* derive_harness.h — what the derive tests share: a scratch directory for
 * their incidents, the last message derive logged, and per case a fresh
 * task registry with an empty incident.  The functions never check (the
 * counters of sptd_test.h belong to each test): callers CHECK what they
 * return. */
#ifndef SPTD_TEST_DERIVE_HARNESS_H
#define SPTD_TEST_DERIVE_HARNESS_H

struct sptd_col_tasks;
struct sptd_store;

/* The scratch directory ("" before harness_init). */
extern char harness_dir[];
/* The last message the collector libraries logged ("" none yet); a test
 * clears it before the call whose message it checks. */
extern char harness_log[512];

/* Make the scratch directory /tmp/sptd-@test-XXXXXX and take the
 * collector's log hook.  0, or -1 with the reason printed. */
int harness_init(const char *test);
/* Remove the scratch directory (empty by then: incidents are never
 * committed). */
void harness_fini(void);
/* A new task registry in *@tasks and a new empty incident @name in *@st.
 * 0 when both were made; otherwise -1, and whichever was made is still
 * handed out for harness_case_end. */
int harness_case(const char *name, struct sptd_col_tasks **tasks, struct sptd_store **st);
/* Destroy what harness_case made (either may be NULL). */
void harness_case_end(struct sptd_col_tasks *tasks, struct sptd_store *st);

#endif
