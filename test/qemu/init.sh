#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the vsw test guest (packed by test/qemu/build_image.py with a
# static busybox and the virtio-net modules). It loads the modules, sets up
# the NICs named on the kernel command line, then runs a command agent on a
# second serial port for test/lib/vswtest/qemu.py.
#
# Kernel command line words read here:
#   vsw.nicN=MAC,ADDR/PREFIX,MTU   one per NIC; found by MAC, so the order
#                                  of the PCI devices does not matter
#   vsw.agent=TTY                  the agent's serial port (default ttyS1)
#
# Agent protocol, one line each way (the port is put in raw mode):
#   host:  ID TIMEOUT SHELL-COMMAND
#   guest: @@BEGIN ID / output (stdout+stderr) / @@END ID STATUS
# The command runs under `timeout`, with stdin from /dev/null; anything
# it leaves running in the background must redirect its own output.
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

log() { echo "vsw-guest: $*"; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
log "kernel $(uname -r), $(nproc) cpu(s), uptime $(cut -d' ' -f1 /proc/uptime) s"

for m in $(cat /lib/modules/load.order); do
	insmod "/lib/modules/$m" || log "insmod $m failed"
done

# Two NICs of one guest may share the L2 domain of vswd's `normal` rule:
# answer ARP only on the interface that holds the address, and no IPv6
# chatter (the kernel command line also has ipv6.disable=1).
sysctl -qw net.ipv4.conf.all.arp_ignore=1
sysctl -qw net.ipv4.conf.all.arp_announce=2
ip link set lo up

# ifname_of MAC: the interface with that address, waiting for the driver
ifname_of() {
	n=0
	while [ $n -lt 50 ]; do
		for d in /sys/class/net/*; do
			if [ "$(cat "$d/address")" = "$1" ]; then
				echo "${d##*/}"
				return 0
			fi
		done
		usleep 100000
		n=$((n + 1))
	done
	return 1
}

agent=ttyS1
for w in $(cat /proc/cmdline); do
	case "$w" in
	vsw.nic*=*)
		set -- $(echo "${w#*=}" | tr , ' ')
		if ifc=$(ifname_of "$1"); then
			ip link set "$ifc" mtu "$3"
			ip addr add "$2" dev "$ifc"
			ip link set "$ifc" up
			log "$ifc $1 $2 mtu $3"
		else
			log "no interface with address $1"
		fi
		;;
	vsw.agent=*)
		agent=${w#*=}
		;;
	esac
done

agent_loop() {
	stty raw -echo
	echo "@@READY $(uname -r) $(cut -d' ' -f1 /proc/uptime)"
	while :; do
		if ! read -r id t cmd; then
			sleep 1
			continue
		fi
		timeout "$t" sh -c "$cmd" </dev/null >/tmp/agent.out 2>&1
		rc=$?
		echo "@@BEGIN $id"
		cat /tmp/agent.out
		echo
		echo "@@END $id $rc"
	done
}

# The agent is a process of its own: PID 1 adopts every orphan (the
# watchers `timeout` leaves behind, background commands), and a SIGCHLD
# that lands in the middle of `read` cuts a command line in two. PID 1
# only reaps.
log "agent on /dev/$agent, up $(cut -d' ' -f1 /proc/uptime) s"
agent_loop <"/dev/$agent" >"/dev/$agent" 2>&1 &
while :; do
	wait
	sleep 1
done
