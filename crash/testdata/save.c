/* save: the editor's save path. Writes NAME.tmp, optionally fsyncs it,
 * renames it over NAME. Usage: save NAME fsync|nofsync BYTES */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: save NAME fsync|nofsync BYTES\n");
		return 2;
	}
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) { perror(tmp); return 1; }
	long n = atol(argv[3]);
	const char *line = "the new version of the document, saved safely\n";
	for (long done = 0; done < n;) {
		long k = strlen(line);
		if (k > n - done) k = n - done;
		if (write(fd, line, k) != k) { perror("write"); return 1; }
		done += k;
	}
	if (strcmp(argv[2], "fsync") == 0 && fsync(fd) != 0) { perror("fsync"); return 1; }
	if (close(fd) != 0) { perror("close"); return 1; }
	if (rename(tmp, argv[1]) != 0) { perror("rename"); return 1; }
	return 0;
}
