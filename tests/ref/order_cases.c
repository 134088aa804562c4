/* order_cases: write the order cases of tests/ref/order.c as model
 * directories, for tools that take directories (tests/e2e/cross.sh).
 *
 *   order_cases DIR     DIR/<case>/{spec.yaml, weights.npz, input.npz,
 *                       expected.npz}; one case name a line on stdout.
 *
 * Exit status: 0, 1 when a case cannot be written, 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "order.h"

int main(int argc, char **argv)
{
	char dir[4096], why[1024];
	if (argc != 2) {
		fprintf(stderr, "usage: order_cases DIR\n");
		return 2;
	}
	for (int k = 0; k < ord_n_cases; k++) {
		const ord_case *c = &ord_cases[k];
		snprintf(dir, sizeof dir, "%s/%s", argv[1], c->name);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "order_cases: cannot create %s: %s\n", dir, strerror(errno));
			return 1;
		}
		if (ord_write_case(c, dir, why, sizeof why) < 0) {
			fprintf(stderr, "order_cases: %s\n", why);
			return 1;
		}
		printf("%s\n", c->name);
	}
	return 0;
}
