/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd: names and defaults shared by the daemon and its client, vswctl.
 */
#ifndef VSW_VSWD_H
#define VSW_VSWD_H

#define VSWD_RUN_DIR_DEFAULT "/run/vsw"
#define VSWD_CTL_SOCKET_NAME "vswd.ctl" /* in the run directory */
#define VSWD_PID_FILE_NAME "vswd.pid"   /* locked while vswd runs */
#define VSWD_VERSION "0.1.0"

#endif /* VSW_VSWD_H */
