/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the vhost-user port unit tests (test_vport*.c). */
#ifndef VSW_TEST_VPORT_H
#define VSW_TEST_VPORT_H

#include <stddef.h>
#include <stdint.h>

struct rte_mempool;
struct vsw_vport;

extern struct rte_mempool *vport_test_pool;

/* A server-mode port with one queue pair at <tmpdir>/<name>; path out. */
struct vsw_vport *vport_test_port(const char *name, char *path, size_t len);

/* The same with qps queue pairs. */
struct vsw_vport *vport_test_port_qps(
	const char *name, char *path, size_t len, uint16_t qps);

void test_vport_guest_resume(void **state);
void test_vport_mq_subset(void **state);

#endif /* VSW_TEST_VPORT_H */
