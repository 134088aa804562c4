/* clock.h: what the test tools that drive a daemon share (tests/load/clock.c):
 * a monotonic clock, a sleep that survives signals, and a process's RSS.
 * Linked into the load generator (tests/load/) and jobscale (tests/bench/). */
#ifndef TESTS_CLOCK_H
#define TESTS_CLOCK_H

/* Seconds on CLOCK_MONOTONIC. */
double now_s(void);
/* Sleep s seconds (nothing for s <= 0), resumed after a signal. */
void sleep_s(double s);
/* VmRSS of process pid in KiB, -1 when unknown. */
long rss_kib(long pid);

#endif
