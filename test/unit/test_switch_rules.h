/* SPDX-License-Identifier: BSD-3-Clause */
/* The cases of test_switch_concurrent.c, run from test_switch_rules.c's
 * main (one group: the harness's EAL starts once). */
#ifndef TEST_SWITCH_RULES_H
#define TEST_SWITCH_RULES_H

void test_concurrent_replace(void **state);
void test_concurrent_learning(void **state);

#endif /* TEST_SWITCH_RULES_H */
