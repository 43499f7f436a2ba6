/* Moves a to d/a and never looks at what rename returned: the program
 * the rename-exdev anomaly should catch as unhandled. */
#include <stdio.h>

int main(void) {
	rename("a", "d/a");
	puts("moved");
	return 0;
}
