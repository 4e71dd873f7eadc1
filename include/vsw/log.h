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
 * Log types: one per library, named by the library's meson.build with
 * -DVSW_LOG_MODULE=<name> (vsw.<name>), so the call sites of a module need
 * not name it. With that macro set, this header gives VSW_LOGTYPE (the
 * module's rte_log type, registered by a constructor in every file that
 * includes it: rte_log returns the same id for the same name) and
 * VSW_LOG(LEVEL, fmt, ...), one line on that type. vswd registers the
 * whole list too (vswd_log.c), so levels can be set for a module that has
 * not logged yet.
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

#ifdef VSW_LOG_MODULE
#define VSW_LOG_CAT2_(a, b) a##b
#define VSW_LOG_CAT2(a, b) VSW_LOG_CAT2_(a, b)
#define VSW_LOGTYPE VSW_LOG_CAT2(vsw_logtype_, VSW_LOG_MODULE)
#define VSW_LOG_NAME "vsw." RTE_STR(VSW_LOG_MODULE)

/* Weak: one variable per library however many files include this. */
int VSW_LOGTYPE __attribute__((weak));

static void __attribute__((constructor, used))
vsw_log_register_module(void)
{
	int t = rte_log_register_type_and_pick_level(VSW_LOG_NAME,
		RTE_LOG_NOTICE);

	VSW_LOGTYPE = t >= 0 ? t : RTE_LOGTYPE_USER1;
}

#define VSW_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, VSW_LOGTYPE, VSW_LOG_NAME ": " fmt "\n", \
		##__VA_ARGS__)
#endif /* VSW_LOG_MODULE */

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
