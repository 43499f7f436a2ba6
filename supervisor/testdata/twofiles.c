/* Writes two files one after the other. */
#include <fcntl.h>
#include <unistd.h>

static int put(const char *name) {
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "x\n", 2) != 2)
		return 1;
	return close(fd);
}

int main(void) { return put("first") || put("second"); }
