# SPDX-License-Identifier: BSD-3-Clause
"""The Python test package of vsw: what the integration tests
(test/integration) and the benchmarks (bench/*.py) share.

  proc     child processes with collected output, their threads and fds
  ctl      the control-socket client (the one implementation)
  testpmd  dpdk-testpmd guests (virtio_user) and backends (net_vhost)
  xconnect vsw-xconnect and its stats blocks
  vswd     vswd in its own run directory, its counters
  checks   named checks, the packet identities, the end-of-test report

Found through PYTHONPATH=test/lib (meson's test() sets it; by hand:
`PYTHONPATH=test/lib python3 bench/vsw-loopback.py ...`, or ./vswdev
bench-loopback). Every wait has a timeout; every process is ours (Popen)
and is stopped by pid, never by name.
"""
