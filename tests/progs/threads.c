/* threads.c — two worker threads doing calls, a mutex, and joins that block
 * the main thread in futex waits. */
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

__attribute__((noinline)) long square(long v)
{
	return v * v;
}

__attribute__((noinline)) void *worker(void *arg)
{
	long id = (long)arg, sum = 0;
	int i;

	for (i = 0; i < 300; i++)
		sum += square(i + id);
	pthread_mutex_lock(&lock);
	total += sum;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long i;

	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return total > 0 ? 0 : 1;
}
