/* overwrite: rewrites NAME in place in two halves with an fsync between,
 * the pattern a kill point catches: killed before the fsync, the file
 * holds only the first half. Usage: overwrite NAME BYTES */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(int fd, long n) {
	const char *line = "rewritten in place, one half at a time\n";
	for (long done = 0; done < n;) {
		long k = strlen(line);
		if (k > n - done) k = n - done;
		if (write(fd, line, k) != k) return -1;
		done += k;
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: overwrite NAME BYTES\n");
		return 2;
	}
	long n = atol(argv[2]);
	int fd = open(argv[1], O_WRONLY | O_TRUNC);
	if (fd < 0) { perror(argv[1]); return 1; }
	if (put(fd, n / 2) || fsync(fd) || put(fd, n - n / 2) || close(fd)) { perror(argv[1]); return 1; }
	return 0;
}
