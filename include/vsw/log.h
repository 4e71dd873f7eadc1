/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rate-limited log for lines a guest (or a front-end) can cause, shared
 * by the virtqueue and the vhost-user port: at most one line per second per
 * limiter, and the line that goes out says how many were held back since
 * (STYLE.md pattern 10: nothing a guest controls logs once per packet).
 *
 * Header-only: copy/ and the top level stay as they are, and each module
 * keeps its own log type and its own cold, printf-checked wrapper.
 *
 * A limiter is two words in the object the lines are about (a queue, a
 * port), both zero at start: next_tsc, the TSC before which lines are held
 * back, and suppressed, how many were. The caller serialises access (one
 * poller per queue; a port's lock).
 */
#ifndef VSW_LOG_H
#define VSW_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_log.h>

/* Longest formatted message; longer ones are cut. */
#define VSW_LOG_LINE_MAX 160

/*
 * Log "<prefix><who>: <fmt...> (N similar lines suppressed)" at WARNING on
 * logtype, unless a line went out through this limiter less than a second
 * ago: then only count it.
 */
static inline void vsw_log_vlimited(uint64_t *next_tsc, uint32_t *suppressed,
	uint32_t logtype, const char *prefix, const char *who, const char *fmt,
	va_list ap) __rte_format_printf(6, 0);

static inline void
vsw_log_vlimited(uint64_t *next_tsc, uint32_t *suppressed, uint32_t logtype,
	const char *prefix, const char *who, const char *fmt, va_list ap)
{
	uint64_t now = rte_get_tsc_cycles();
	uint64_t hz;
	char msg[VSW_LOG_LINE_MAX];

	if (now < *next_tsc) {
		(*suppressed)++;
		return;
	}
	hz = rte_get_tsc_hz();
	/* no calibrated TSC (a test without EAL): assume 2 GHz */
	*next_tsc = now + (hz != 0 ? hz : UINT64_C(2000000000));
	vsnprintf(msg, sizeof(msg), fmt, ap);
	rte_log(RTE_LOG_WARNING, logtype,
		"%s%s: %s (%u similar lines suppressed)\n", prefix, who, msg,
		*suppressed);
	*suppressed = 0;
}

#endif /* VSW_LOG_H */
