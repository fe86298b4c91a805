// SPDX-License-Identifier: GPL-2.0
/* report_trace.c: calls report_trace(0x1000 + i) for i in 0..N-1 (N = 5, or the first argument). */
#include <stdio.h>
#include <stdlib.h>

/* the function a uprobe watches: its first argument is the context value */
__attribute__((noinline)) unsigned long report_trace(unsigned long context)
{
	/* keeps the call, and its argument, from being folded away */
	__asm__ volatile("" : "+r"(context));
	return context;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 5;
	unsigned long sum = 0;

	for (i = 0; i < n; i++)
		sum += report_trace(0x1000 + i);
	printf("%lu\n", sum);
	return 0;
}
