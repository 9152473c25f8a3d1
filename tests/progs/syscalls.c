/* syscalls.c — a loop of write() to /dev/null and getpid(). */
#include <fcntl.h>
#include <unistd.h>

__attribute__((noinline)) int work(int fd, int i)
{
	char buf[16] = "ptgen syscall\n";

	if (write(fd, buf, 14) != 14)
		return -1;
	return (int)getpid() + i;
}

int main(void)
{
	int fd = open("/dev/null", O_WRONLY), i;
	long acc = 0;

	if (fd < 0)
		return 1;
	for (i = 0; i < 20; i++)
		acc += work(fd, i);
	close(fd);
	return acc == 0;
}
