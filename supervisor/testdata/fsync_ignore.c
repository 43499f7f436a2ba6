/* Writes a file, fsyncs it and ignores what fsync says. */
#include <fcntl.h>
#include <unistd.h>

int main(void) {
	int fd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 2;
	if (write(fd, "data\n", 5) != 5)
		return 2;
	fsync(fd); /* the bug: the result is ignored */
	close(fd);
	return 0;
}
