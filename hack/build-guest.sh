#!/usr/bin/env bash
# Builds the project's test guest: Debian's cloud kernel plus a busybox
# initramfs whose init
#   - prints "VIRT-GUEST-READY <hostname>" on ttyS0 once it is up
#     (hostname from the kernel argument virt.hostname=, default virt-guest),
#   - powers off on the ACPI power button, printing VIRT-GUEST-ACPI-SHUTDOWN
#     first (button.ko + evdev.ko + busybox acpid: a bare busybox ignores it),
#   - with the kernel argument virt.acpi=ignore ignores the power button, so
#     the destroy-after-grace path can be tested with the same files,
#   - loads the virtio-net drivers (modules in the cloud kernel), brings up
#     lo and, if there is an eth0, runs busybox udhcpc on it in the
#     background after the marker (a guest without a NIC or without a DHCP
#     server is not delayed): the lease sets address and prefix, default
#     route, MTU, /etc/resolv.conf (dns, search or domain) and the hostname
#     if it carries one; once bound, "VIRT-GUEST-NET <ip>" goes to ttyS0, on
#     a line of its own. udhcpc stays to renew (and retries every few
#     seconds while it has no lease),
#   - serves /www with busybox httpd on ports 80 and 8080:
#       /                      "<h1>NAME</h1>" and "VIRT-GUEST-HTTP NAME",
#                              NAME the hostname (rewritten when DHCP
#                              brings another),
#       /cgi-bin/client        the client's address as the guest saw it,
#       /cgi-bin/fetch?IP:PORT (or ?IP&PORT) the body of a GET / to
#                              IP:PORT through busybox nc (X-Upstream-Status
#                              carries its status line); 400 for another
#                              query, 502 "VIRT-GUEST-FETCH-ERROR ..." when
#                              nothing answers in 5 s (10 s in all),
#       /big                   only with virt.bigfile=N: N MiB of zeros,
#                              for throughput benchmarks,
#   - with the kernel argument virt.spew=1 prints lines to ttyS0 without end
#     once it is up ("VIRT-GUEST-SPEW <n> ...", ~100 bytes each, as fast as
#     the serial port takes them), for the test that the serial log stays
#     bounded,
#   - with the kernel argument virt.tick=1 prints "VIRT-GUEST-TICK <n>
#     <uptime>" to ttyS0 every 100 ms once it is up, n counting from 1, for
#     the live-migration tests (a gap or a repeat in n shows on the console),
#   - with the kernel argument virt.dirty=N rewrites N MiB of its memory (a
#     file in the initramfs's tmpfs) without end once it is up, 1 MiB per
#     dd, for the migration benchmark's memory-dirtying guest;
#     "VIRT-GUEST-DIRTY N" goes to ttyS0 once all N MiB were written once,
#   - with the kernel argument virt.hostileagent=1 runs a hostile guest
#     agent (bin/virt-hostile-agent) on the virtio-serial port
#     org.qemu.guest_agent.0: it speaks QGA's protocol but reports an
#     address that is not an IP, an interface with 10,000 addresses, 1,000
#     interfaces, a hardware address that is not a MAC, 1 MiB strings and
#     a string whose cut falls inside a character, for the test that such a report is cut and the VMI's
#     status still written; "VIRT-GUEST-AGENT <port>" goes to ttyS0 once it
#     listens,
#   - prints "VIRT-GUEST-ERROR ..." on ttyS0 when a module does not load or
#     the big file does not fit,
#   - then runs an interactive shell (busybox ash as root, no login) on ttyS0,
#     for console clients, and one on tty1, the VGA text console a VNC client
#     sees (the ready marker is printed there too); busybox init restarts a
#     shell that exits,
#     The kernel writes its own messages to tty1 only with console=tty0; give
#     it last (console=tty0 console=ttyS0) so /dev/console stays the serial
#     port.
# The guest needs at least 80 MiB of memory (the bzImage unpacks to ~67 MiB;
# with 72 MiB the kernel now and then runs out of memory while booting);
# 128 MiB is a safe default. /big lives in the initramfs's tmpfs, which holds
# at most half the memory: virt.bigfile=N needs about 2*N+48 MiB (64 MiB of
# file: 192 MiB of guest).
#
# Result: ${VIRT_CACHE}/guest/<kernel>-<busybox>-<script hash>/{vmlinuz,initrd.gz},
# its directory printed on stdout. A second run with the same inputs is
# instant. Needs no root once apt's package lists exist.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# The fast path: a guest built by this very script is reused as it is, without
# asking apt (which costs seconds); delete ${VIRT_CACHE}/guest to pick up a
# newer Debian kernel.
script_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
current="${VIRT_CACHE}/guest/current-${script_hash}"
if [ -s "${current}/vmlinuz" ] && [ -s "${current}/initrd.gz" ]; then
  readlink -f "${current}"
  exit 0
fi

# Resolve the kernel package the meta package points at, and refresh apt's
# lists once if they are missing (a fresh machine that never ran apt-get update).
resolve() {
  apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'
}
kernel_pkg="$(resolve)"
if [ -z "${kernel_pkg}" ]; then
  [ "$(id -u)" -eq 0 ] || die "apt has no package lists: run 'apt-get update' as root"
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  kernel_pkg="$(resolve)"
  [ -n "${kernel_pkg}" ] || die "cannot resolve linux-image-cloud-amd64 from apt"
fi
version_of() { apt-cache policy "$1" | awk '/Candidate:/{print $2; exit}'; }
kernel_ver="$(version_of "${kernel_pkg}")"
busybox_ver="$(version_of busybox-static)"
[ -n "${kernel_ver}" ] && [ -n "${busybox_ver}" ] || die "cannot resolve package versions"

out="${VIRT_CACHE}/guest/${kernel_pkg#linux-image-}-busybox${busybox_ver//[:+~]/_}-${script_hash}"
if [ -s "${out}/vmlinuz" ] && [ -s "${out}/initrd.gz" ]; then
  ln -sfn "$(basename "${out}")" "${current}"
  echo "${out}"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
log "build-guest: downloading ${kernel_pkg}=${kernel_ver} and busybox-static=${busybox_ver}"
# apt-get download writes into the current directory; _apt needs to be able
# to write there when run as root.
chmod 777 "${work}"
(cd "${work}" && apt-get download -qq "${kernel_pkg}=${kernel_ver}" "busybox-static=${busybox_ver}" >&2)
dpkg -x "${work}"/linux-image-*.deb "${work}/kernel"
dpkg -x "${work}"/busybox-static_*.deb "${work}/busybox"

root="${work}/initrd"
mkdir -p "${root}"/{bin,proc,sys,dev,tmp,etc/acpi/PWRF,etc/udhcpc,lib/modules,www/cgi-bin}
cp "${work}/busybox/bin/busybox" "${root}/bin/busybox"
# Every applet, so that the shells are usable.
for applet in $("${root}/bin/busybox" --list); do
  case "${applet}" in busybox | linuxrc) continue ;; esac
  ln -s busybox "${root}/bin/${applet}"
done
# Copies module NAME of the kernel package to /lib/modules/NAME.ko,
# uncompressed (busybox insmod reads plain .ko files only).
copy_module() {
  local name="$1" src
  src="$(find "${work}/kernel/lib/modules" \( -name "${name}.ko" -o -name "${name}.ko.xz" \) | head -n1)"
  [ -n "${src}" ] || die "module ${name} not found in ${kernel_pkg}"
  case "${src}" in
    *.ko) cp "${src}" "${root}/lib/modules/${name}.ko" ;;
    *.ko.xz) xz -dc "${src}" >"${root}/lib/modules/${name}.ko" ;;
    *) die "unsupported module compression: ${src}" ;;
  esac
}
copy_module button
copy_module evdev
# The cloud kernel builds virtio, virtio-pci, virtio-net and virtio-blk as
# modules; each one here depends only on those before it (their depends=
# lines), which is the order the init loads them in. virtio_blk gives the
# guest its disks (vda, vdb, ...: containerDisks, PVCs, empty disks),
# virtio_console its virtio-serial ports (the guest agent's channel).
net_modules=(failover net_failover virtio_ring virtio virtio_pci_legacy_dev
  virtio_pci_modern_dev virtio_pci virtio_net virtio_blk virtio_console)
for mod in "${net_modules[@]}"; do
  copy_module "${mod}"
done
printf '%s\n' "${net_modules[@]}" >"${root}/lib/modules/net.order"

cat >"${root}/etc/acpi/PWRF/00000080" <<'EOF'
#!/bin/sh
echo VIRT-GUEST-ACPI-SHUTDOWN > /dev/ttyS0
poweroff -f
EOF
chmod 755 "${root}/etc/acpi/PWRF/00000080"

# (Re)writes /www/index.html for the current hostname: at boot and when a
# DHCP lease brings another name. Written aside and renamed, so that a
# client never reads half a page.
cat >"${root}/bin/virt-index" <<'EOF'
#!/bin/sh
name="$(hostname | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')"
printf '<h1>%s</h1>\nVIRT-GUEST-HTTP %s\n' "$name" "$name" >/www/index.html.tmp
mv /www/index.html.tmp /www/index.html
EOF

# busybox udhcpc runs this at each DHCP event ($1), with the lease in the
# environment: ip, mask (prefix length), subnet, router, staticroutes, dns,
# domain, search, mtu, hostname.
cat >"${root}/etc/udhcpc/default.script" <<'EOF'
#!/bin/sh
event="$1"
case "$event" in
deconfig)
  # No lease (yet, or any more): no address, but the link up so that
  # udhcpc can send.
  ip -4 addr flush dev "$interface"
  ip link set "$interface" up
  ;;
bound | renew)
  prefix="${mask:-}"
  if [ -z "$prefix" ]; then
    prefix="$(ipcalc -p "$ip" "${subnet:-255.255.255.255}")"
    prefix="${prefix#PREFIX=}"
  fi
  [ -z "${mtu:-}" ] || ip link set "$interface" mtu "$mtu"
  changed=
  if ! ip -4 addr show dev "$interface" | grep -qF "inet $ip/$prefix "; then
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/$prefix" broadcast + dev "$interface"
    changed=1
  fi
  if [ -n "${staticroutes:-}" ]; then
    # Classless static routes (option 121, "dest/prefix gateway" pairs,
    # gateway 0.0.0.0 on the link) replace the router option (RFC 3442):
    # the bridge binding hands over the pod's own routes this way. On-link
    # routes come first in the list, so later gateways are reachable.
    set -- $staticroutes
    while [ $# -ge 2 ]; do
      if [ "$2" = 0.0.0.0 ]; then
        ip route replace "$1" dev "$interface"
      else
        ip route replace "$1" via "$2" dev "$interface"
      fi
      shift 2
    done
  else
    for r in ${router:-}; do
      # A router outside the lease's subnet (a /32 lease, a link-local
      # gateway) is on the link all the same.
      ip route replace default via "$r" dev "$interface" 2>/dev/null || {
        ip route replace "$r" dev "$interface"
        ip route replace default via "$r" dev "$interface"
      }
      break
    done
  fi
  {
    [ -z "${search:-${domain:-}}" ] || echo "search ${search:-$domain}"
    for d in ${dns:-}; do echo "nameserver $d"; done
  } >/etc/resolv.conf.tmp
  mv /etc/resolv.conf.tmp /etc/resolv.conf
  if [ -n "${hostname:-}" ] && [ "$hostname" != "$(hostname)" ]; then
    hostname "$hostname"
    virt-index
  fi
  if [ "$event" = bound ] || [ -n "$changed" ]; then
    # On a line of its own: the shell's prompt is usually there already.
    printf '\nVIRT-GUEST-NET %s\n' "$ip" >/dev/ttyS0
  fi
  ;;
esac
exit 0
EOF

# The address of the client as httpd saw it: tests check that the guest
# sees the real source of a connection, not a proxy's. httpd listens on
# IPv6 too and names an IPv4 client [::ffff:a.b.c.d].
cat >"${root}/www/cgi-bin/client" <<'EOF'
#!/bin/sh
addr="${REMOTE_ADDR#\[}"
addr="${addr%]}"
printf 'Content-Type: text/plain\r\n\r\n%s\n' "${addr#::ffff:}"
EOF

# GET / from the address in the query (HOST:PORT or HOST&PORT) and answer
# its body, for tests of the guest's way out. The query must be an IPv4
# address and a port: nothing else reaches nc. busybox-static's wget
# crashes (static glibc), hence nc; it only bounds the connect, so timeout
# bounds the whole exchange.
cat >"${root}/www/cgi-bin/fetch" <<'EOF'
#!/bin/sh
reply() {
  printf 'HTTP/1.0 %s\r\nContent-Type: text/plain\r\n\r\nVIRT-GUEST-FETCH-ERROR %s\n' "$1" "$2"
  exit 0
}
query="${QUERY_STRING:-}"
case "$query" in
  *[!0-9.:\&]*) reply '400 Bad Request' 'query must be HOST:PORT (IPv4 address)' ;;
esac
echo "$query" | grep -qE '^[0-9]{1,3}(\.[0-9]{1,3}){3}[:&][0-9]{1,5}$' ||
  reply '400 Bad Request' "query must be HOST:PORT (IPv4 address), not '$query'"
host="${query%%[:&]*}"
port="${query#*[:&]}"
[ "$port" -ge 1 ] && [ "$port" -le 65535 ] || reply '400 Bad Request' "bad port $port"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
printf 'GET / HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$host" "$port" |
  timeout 10 nc -w 5 "$host" "$port" >"$out" 2>/dev/null
status="$(head -n1 "$out" | tr -d '\r')"
case "$status" in
  HTTP/*) ;;
  *) reply '502 Bad Gateway' "$host:$port: no HTTP response" ;;
esac
printf 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nX-Upstream-Status: %s\r\n\r\n' "$status"
awk 'body { print; next } { sub(/\r$/, "") } $0 == "" { body = 1 }' "$out"
EOF
# A guest agent that lies: QGA's protocol (a JSON command a line from the
# host, a JSON answer a line back) answered by busybox sh. It answers
# guest-sync(-delimited) with the host's id (libvirt syncs before its
# commands and drops answers of another id), guest-ping and guest-info
# plainly, and the reports libvirt's virDomainGetGuestInfo asks for
# (guest-get-osinfo, guest-get-host-name, guest-network-get-interfaces)
# with hostile data (but no invalid UTF-8: libvirt 9.0 fails to parse such
# an answer and from then on reports the agent in error), prepared once in
# /tmp/qga so that each answer is a few cats. Every other command gets QGA's CommandNotFound.
cat >"${root}/bin/virt-hostile-agent" <<'EOF'
#!/bin/sh
name=org.qemu.guest_agent.0
port=
# The port's node appears once virtio_console probed it (asynchronously).
for i in $(seq 100); do
  for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = "$name" ] && port="/dev/${p##*/}"
  done
  [ -n "$port" ] && [ -e "$port" ] && break
  port=
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "VIRT-GUEST-ERROR no virtio-serial port $name" >/dev/ttyS0
  exit 1
fi
d=/tmp/qga
mkdir -p "$d"
# 1 MiB of "A" (no newline: the file is spliced into a JSON string).
head -c 1048576 /dev/zero | tr '\0' A >"$d/mib"
# 255 bytes and then 2-byte characters: cut to 256 bytes, the string must
# lose the whole first "é". (Bytes that are not UTF-8 never get past
# libvirt: it refuses the answer, and the agent for good.)
{ head -c 255 /dev/zero | tr '\0' A; printf '\303\251\303\251'; } >"$d/split"
# 10,000 valid addresses of one interface.
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "%s{\"ip-address-type\":\"ipv4\",\"ip-address\":\"198.18.%d.%d\",\"prefix\":15}", (i ? "," : ""), int(i / 256) % 256, i % 256 }' >"$d/addrs"
# 1,000 more interfaces of one address each.
awk 'BEGIN { for (i = 0; i < 1000; i++) printf ",{\"name\":\"h%d\",\"hardware-address\":\"52:54:00:01:%02x:%02x\",\"ip-addresses\":[{\"ip-address-type\":\"ipv4\",\"ip-address\":\"198.19.%d.%d\",\"prefix\":15}]}", i, int(i / 256), i % 256, int(i / 256), i % 256 }' >"$d/ifaces"
exec 3<>"$port"
echo "VIRT-GUEST-AGENT $port" >/dev/ttyS0
while :; do
  # read fails when the host end is closed (libvirt not connected): wait
  # for it instead of spinning.
  if ! IFS= read -r line <&3; then
    sleep 1
    continue
  fi
  id="$(echo "$line" | sed -n 's/.*"id"[^0-9]*\([0-9][0-9]*\).*/\1/p')"
  case "$line" in
  *'"guest-sync-delimited"'*) printf '\377{"return": %s}\n' "${id:-0}" >&3 ;;
  *'"guest-sync"'*) printf '{"return": %s}\n' "${id:-0}" >&3 ;;
  *'"guest-ping"'*) printf '{"return": {}}\n' >&3 ;;
  *'"guest-info"'*) printf '{"return": {"version": "virt-hostile-agent", "supported_commands": []}}\n' >&3 ;;
  *'"guest-get-host-name"'*)
    { printf '{"return": {"host-name": "'; cat "$d/mib"; printf '"}}\n'; } >&3 ;;
  *'"guest-get-osinfo"'*)
    {
      printf '{"return": {"id": "'; cat "$d/split"; printf '", "name": "'; cat "$d/mib"
      printf '", "pretty-name": "'; cat "$d/mib"; printf '", "version": "'; cat "$d/split"
      printf '", "version-id": "1", "kernel-release": "'; cat "$d/mib"
      printf '", "kernel-version": "x", "machine": "x86_64"}}\n'
    } >&3 ;;
  *'"guest-network-get-interfaces"'*)
    {
      printf '{"return": [{"name": "eth-not-ip", "hardware-address": "not-a-mac", "ip-addresses": [{"ip-address-type": "ipv4", "ip-address": "not-an-ip", "prefix": 24}]}'
      printf ', {"name": "eth-many", "hardware-address": "52:54:00:00:00:01", "ip-addresses": ['; cat "$d/addrs"; printf ']}'
      printf ', {"name": "'; cat "$d/mib"; printf '", "hardware-address": "52:54:00:00:00:02", "ip-addresses": []}'
      cat "$d/ifaces"
      printf ']}\n'
    } >&3 ;;
  *) printf '{"error": {"class": "CommandNotFound", "desc": "virt-hostile-agent does not know this command"}}\n' >&3 ;;
  esac
done
EOF
chmod 755 "${root}/bin/virt-index" "${root}/bin/virt-hostile-agent" "${root}/etc/udhcpc/default.script" "${root}"/www/cgi-bin/*

# Each shell runs as a session leader on its terminal (job control, ^C) and
# is started again when it exits.
cat >"${root}/etc/inittab" <<'EOF'
ttyS0::respawn:/bin/sh
tty1::respawn:/bin/sh
EOF

cat >"${root}/init" <<'EOF'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
name=virt-guest
acpi=poweroff
bigfile=
spew=
tick=
dirty=
hostileagent=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    virt.hostname=*) name="${arg#virt.hostname=}" ;;
    virt.acpi=*) acpi="${arg#virt.acpi=}" ;;
    virt.bigfile=*) bigfile="${arg#virt.bigfile=}" ;;
    virt.spew=*) spew="${arg#virt.spew=}" ;;
    virt.tick=*) tick="${arg#virt.tick=}" ;;
    virt.dirty=*) dirty="${arg#virt.dirty=}" ;;
    virt.hostileagent=*) hostileagent="${arg#virt.hostileagent=}" ;;
  esac
done
hostname "$name"
ip link set lo up
# Probing binds virtio-net to the NIC and registers eth0 before insmod
# returns; a guest without a NIC just loads unused drivers.
for mod in $(cat /lib/modules/net.order); do
  insmod "/lib/modules/$mod.ko" || echo "VIRT-GUEST-ERROR insmod $mod" > /dev/ttyS0
done
if [ "$acpi" = ignore ]; then
  echo "VIRT-GUEST-ACPI-IGNORED" > /dev/ttyS0
else
  # The power button reaches user space only through evdev; busybox acpid
  # then runs /etc/acpi/PWRF/00000080.
  insmod /lib/modules/evdev.ko
  insmod /lib/modules/button.ko
  # acpid opens the event devices that exist when it starts, and devtmpfs
  # creates their nodes asynchronously: wait for every one (up to 5 s), or
  # an early power button press is lost.
  for i in $(seq 50); do
    missing=0
    for e in /sys/class/input/event*; do
      [ -e "/dev/input/${e##*/}" ] || missing=1
    done
    [ "$missing" = 0 ] && break
    sleep 0.1
  done
  acpid -c /etc/acpi -l /dev/null
fi
virt-index
# The throughput benchmark's file, in the initramfs's tmpfs, which may fill
# half of the guest's memory.
case "$bigfile" in
  '') ;;
  *[!0-9]*) echo "VIRT-GUEST-ERROR virt.bigfile=$bigfile: not a number of MiB" > /dev/ttyS0 ;;
  *)
    if dd if=/dev/zero of=/www/big.tmp bs=1M count="$bigfile" 2>/dev/null; then
      mv /www/big.tmp /www/big
    else
      rm -f /www/big.tmp
      echo "VIRT-GUEST-ERROR virt.bigfile=$bigfile: no room, give the guest more memory" > /dev/ttyS0
    fi
    ;;
esac
# Two ports, so that tests can tell which ports reach the guest.
httpd -p 80 -h /www
httpd -p 8080 -h /www
# Up before the marker, so that the kernel's "link becomes ready" lands on
# the console before it rather than amid the shell.
[ ! -e /sys/class/net/eth0 ] || ip link set eth0 up
echo "VIRT-GUEST-READY $name" > /dev/ttyS0
echo "VIRT-GUEST-READY $name" > /dev/tty1
# DHCP goes on in the background, after the marker, so that a missing or
# slow DHCP server delays nothing; udhcpc stays to renew the lease (and
# retries every few seconds while it has none). Its chatter would land on
# the interactive console: the script prints VIRT-GUEST-NET when bound.
if [ -e /sys/class/net/eth0 ]; then
  udhcpc -f -i eth0 -t 5 -T 2 -A 5 -O mtu -O search -O hostname </dev/null >/dev/null 2>&1 &
fi
# A guest that floods its console: lines numbered so a reader can tell what
# was kept, in a loop of the shell's builtins (no fork per line).
if [ "$spew" = 1 ]; then
  (n=0; while :; do n=$((n+1)); echo "VIRT-GUEST-SPEW $n 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"; done) >/dev/ttyS0 2>&1 </dev/null &
fi
# A heartbeat on the console: numbered, with the guest's uptime, from the
# shell's builtins but the sleep.
if [ "$tick" = 1 ]; then
  (n=0; while :; do n=$((n+1)); read up idle </proc/uptime; echo "VIRT-GUEST-TICK $n $up"; usleep 100000; done) >/dev/ttyS0 2>&1 </dev/null &
fi
# Memory the guest keeps writing: the same tmpfs pages overwritten in a loop.
case "$dirty" in
  '') ;;
  *[!0-9]*) echo "VIRT-GUEST-ERROR virt.dirty=$dirty: not a number of MiB" > /dev/ttyS0 ;;
  # "y" lines, not zeros: QEMU sends a zero page as a flag, not its bytes.
  # Not "yes | dd bs=64k count=...": dd counts the pipe's short reads (a few
  # KiB each) as blocks, so that wrote 8.6 MiB whatever N was. One MiB of
  # "y" made once (busybox's yes is slow under TCG: 64 KiB, copied 16
  # times), then copied over each MiB of the file in turn.
  *) (yes | head -c 65536 >/dirty.64k
      for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do cat /dirty.64k; done >/dirty.1m
      rm -f /dirty.64k
      pass=0
      while :; do
        i=0
        while [ "$i" -lt "$dirty" ]; do
          dd if=/dirty.1m of=/dirty bs=1M seek="$i" count=1 conv=notrunc 2>/dev/null || exit 1
          i=$((i+1))
        done
        pass=$((pass+1))
        [ "$pass" = 1 ] && echo "VIRT-GUEST-DIRTY $dirty" >/dev/ttyS0
      done) </dev/null >/dev/null 2>&1 & ;;
esac
if [ "$hostileagent" = 1 ]; then
  virt-hostile-agent </dev/null >/dev/null 2>&1 &
fi
# busybox init runs the shells of /etc/inittab (and reaps orphans). Started
# by a shell script instead, they would inherit the ignored SIGINT of a
# background job and ^C would not work.
export PS1='\h:\w# '
exec /bin/init
EOF
chmod 755 "${root}/init"

staging="${out}.tmp.$$"
rm -rf "${staging}"
mkdir -p "${staging}"
(cd "${root}" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -9n) >"${staging}/initrd.gz"
cp "${work}"/kernel/boot/vmlinuz-* "${staging}/vmlinuz"
# qemu may run as another user and must read them.
chmod 755 "${staging}"
chmod 644 "${staging}"/*
rm -rf "${out}"
mv "${staging}" "${out}"
ln -sfn "$(basename "${out}")" "${current}"
log "build-guest: built ${out}"
echo "${out}"
