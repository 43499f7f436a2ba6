/* Four threads each create, write, fsync and close their own file while
 * the main thread waits: lockstep replay must map the threads by creation
 * order and not report a divergence for their interleaving. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *work(void *arg) {
	char name[32], buf[64];
	long n = (long)arg;
	snprintf(name, sizeof name, "t%ld", n);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return (void *)1;
	int len = snprintf(buf, sizeof buf, "thread %ld\n", n);
	for (int i = 0; i < 8; i++)
		if (write(fd, buf, len) != len)
			return (void *)1;
	fsync(fd);
	close(fd);
	return NULL;
}

int main(void) {
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	int bad = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad |= r != NULL;
	}
	return bad;
}
