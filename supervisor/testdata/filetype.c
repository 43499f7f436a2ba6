/* Refuses to work on anything but a regular file: exits 1 with a
 * message when stat says otherwise. */
#include <stdio.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
	struct stat st;
	const char *p = argc > 1 ? argv[1] : "a";
	if (stat(p, &st) != 0) {
		perror(p);
		return 2;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: not a regular file (mode %o)\n", p, st.st_mode);
		return 1;
	}
	return 0;
}
