#!/usr/bin/env bash
# The load and fault figures of docs/reliability.md, on loopback: the real
# mcpdiag proxy in front of the real mcpdiag serve, driven by
# internal/reliability (TestReliability with -reliability.full). Bounded:
# every experiment has fixed counts, every wait a limit; about 3 minutes
# on two cores. The short form of the same test (small counts) runs in
# ./scripts/test.sh with the rest of go test.
#
#   ./scripts/reliability.sh            # full counts; a 64 KiB tmpfs for the full disk when root can mount one
#   RELIABILITY_KEEP=DIR ./scripts/reliability.sh   # keep the records and logs in DIR
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== $(date -u +%FT%TZ) $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), open files limit $(ulimit -n)"
tmpfs_args=()
mnt=""
if [ "$(id -u)" = 0 ]; then
	mnt="$(mktemp -d)"
	if mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
		tmpfs_args=(-reliability.tmpfs "$mnt")
		echo "== full disk: a 64 KiB tmpfs at $mnt, /dev/full and ulimit -f 16"
	else
		rmdir "$mnt"; mnt=""
		echo "== full disk: cannot mount a tmpfs; /dev/full and ulimit -f 16 only"
	fi
else
	echo "== full disk: not root, no tmpfs; /dev/full and ulimit -f 16 only"
fi
cleanup() { if [ -n "$mnt" ]; then umount "$mnt" && rmdir "$mnt"; fi; }
trap cleanup EXIT

status=0
go test -count=1 -timeout 20m -v -run '^TestReliability$' ./internal/reliability -args -reliability.full "${tmpfs_args[@]}" || status=$?
echo "== $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
