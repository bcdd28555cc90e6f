#!/usr/bin/env bash
# Stops the local cluster and undoes what it did to the host: pods are
# stopped (gracefully through the API while it answers, then by force),
# every daemon up.sh started is stopped by its PID, containerd's shims and
# anything left in the pods' cgroups are killed, everything mounted under
# ${VIRT_STATE} is unmounted, the bridge, kube-proxy's iptables rules, the
# pods' cgroups and the host paths the components created are removed, and
# the sysctls they changed are restored. Fails, listing them, if processes,
# mounts or the bridge survive.
#
# State (certificates, etcd, images, virt-apiserver's data, the local-path
# volumes in ${VIRT_STATE}/local-path) is kept for the next `make up`; with
# --purge ${VIRT_STATE} is removed as well, and the volumes with it.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/configs.sh"
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"

purge=0
[ "${1:-}" = "--purge" ] && purge=1
[ "$(id -u)" -eq 0 ] || die "the local cluster needs root"
# How long pods get to stop through the API (virt-launcher shuts its guest
# down in that time) before they are killed.
grace="${VIRT_DOWN_GRACE:-60}"
t0=$(date +%s)
[ -d "${VIRT_STATE}" ] || { log "nothing to do: no ${VIRT_STATE}"; exit 0; }
lock_state

# 1. Pods. The controller-manager goes first, or ReplicaSets and DaemonSets
# would recreate the pods being stopped; and once virt-apiserver's pod is
# gone its APIService is unavailable, which would stall the namespace
# controller and the garbage collector cluster-wide (docs/runbooks.md):
# neither runs any more by then. `make uninstall` removes the platform
# from a running cluster in a safe order.
if running kube-apiserver && running kubelet && apiserver_ready; then
  stop_daemon kube-controller-manager
  stop_daemon kube-scheduler
  # Only the nodes' pods, as when the nodes are shut down: pods still
  # waiting for a node stay and are scheduled after the next `make up`.
  on_nodes() {
    local k
    for k in 1 $(existing_nodes); do
      kubectl get pods --all-namespaces --field-selector "spec.nodeName=$(node_name "${k}")" -o name 2>/dev/null
    done
  }
  if [ -n "$(on_nodes)" ]; then
    log "stopping pods (up to ${grace}s)"
    for k in 1 $(existing_nodes); do
      kubectl delete pods --all-namespaces --field-selector "spec.nodeName=$(node_name "${k}")" \
        --wait=false >/dev/null 2>&1 || true
    done
    deadline=$((t0 + grace))
    while [ -n "$(on_nodes)" ] && [ "$(date +%s)" -lt "${deadline}" ]; do
      sleep 0.5
    done
  fi
fi
# The extra nodes (node.sh): every process, their namespaces, veths,
# routes and cgroups; their state stays unless --purge.
for k in $(existing_nodes); do
  log "stopping node $(node_name "${k}")"
  node_teardown "${k}"
done
nodes_net_down
stop_daemon kube-proxy
stop_daemon kubelet

# 2. Whatever still runs in a pod: kill the containers through containerd,
# then anything in the pods' cgroups, then the shims of our containerd.
if running containerd; then
  for id in $(ctr -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -n k8s.io tasks kill -s SIGKILL "${id}" >/dev/null 2>&1 || true
  done
fi
pod_pids() {
  find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
  return 0
}
for _ in 1 2 3; do
  pids="$(pod_pids)"
  [ -z "${pids}" ] && break
  kill -KILL ${pids} 2>/dev/null || true
  sleep 0.5
done
if running containerd; then
  for id in $(ctr -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -n k8s.io tasks delete -f "${id}" >/dev/null 2>&1 || true
  done
fi
stop_daemon containerd
# Shims of our containerd carry its socket in their command line.
shim_pids() {
  local p
  for p in /proc/[0-9]*; do
    grep -q "containerd-shim.* -address ${CONTAINERD_SOCK} " < <(tr '\0' ' ' 2>/dev/null <"${p}/cmdline") &&
      echo "${p#/proc/}"
  done
  return 0
}
pids="$(shim_pids)"
if [ -n "${pids}" ]; then
  kill -TERM ${pids} 2>/dev/null || true
  sleep 1
  kill -KILL $(shim_pids) 2>/dev/null || true
fi

# 3. The control plane, dependents first.
stop_daemon kube-controller-manager
stop_daemon kube-scheduler
stop_daemon kube-apiserver 30
stop_daemon etcd

# 4. Mounts under the state directory (pod volumes and rootfs, network
# namespaces, the kubelet's bind mount of its root), deepest first.
mounts_under_state() { awk -v s="${VIRT_STATE}" '$5 == s || index($5, s "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r; }
for _ in 1 2 3; do
  ms="$(mounts_under_state)"
  [ -z "${ms}" ] && break
  for m in ${ms}; do umount "${m}" 2>/dev/null || true; done
done
for m in $(mounts_under_state); do
  log "lazily unmounting busy ${m}"
  umount -l "${m}" 2>/dev/null || true
done

# 5. Network: the bridge (its veths went with the pods' namespaces), the IP
# allocations of pods that will never be torn down by CNI, kube-proxy's rules.
ip link del "${BRIDGE}" 2>/dev/null || true
ip route del unreachable "${NODES_CIDR}" 2>/dev/null || true
ip route del unreachable 198.18.0.0/15 2>/dev/null || true # up.sh's first multi-node version
rm -rf "${VIRT_STATE}/cni/ipam"
rm -f /var/lib/cni/results/"${CNI_NETWORK}"-* 2>/dev/null || true
if [ -x "${KUBE_BIN}/kube-proxy" ]; then
  "${KUBE_BIN}/kube-proxy" --cleanup >/dev/null 2>&1 || true
fi
# Sweep what --cleanup leaves (its canary chains): first the jumps from
# the built-in chains into KUBE-* chains, then the chains themselves.
for ipt in iptables ip6tables; do
  command -v "${ipt}" >/dev/null || continue
  for table in filter nat mangle raw; do
    rules="$("${ipt}-save" -t "${table}" 2>/dev/null)" || continue
    { grep -E '^-A [A-Z]+ .*-j KUBE-' <<<"${rules}" || true; } | sed 's/^-A /-D /' | while read -r rule; do
      eval "${ipt} -w -t ${table} ${rule}" 2>/dev/null || true
    done
    chains="$(grep -oE '^:KUBE-[^ ]+' <<<"${rules}" | cut -c2- || true)"
    for c in ${chains}; do "${ipt}" -w -t "${table}" -F "${c}" 2>/dev/null || true; done
    for c in ${chains}; do "${ipt}" -w -t "${table}" -X "${c}" 2>/dev/null || true; done
  done
done

# 6. Host state: sysctls, the pods' cgroups, paths outside the state dir.
if [ -f "${HOST_RECORD}/sysctl" ]; then
  while IFS= read -r kv; do
    sysctl -qw "${kv}" >/dev/null 2>&1 || log "could not restore sysctl ${kv}"
  done <"${HOST_RECORD}/sysctl"
  rm -f "${HOST_RECORD}/sysctl"
fi
for d in /sys/fs/cgroup/*/kubepods; do
  [ -d "${d}" ] && find "${d}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
done
find /var/log/containers -maxdepth 1 -type l -lname "${VIRT_STATE}/*" -delete 2>/dev/null || true
if [ -f "${HOST_RECORD}/paths" ]; then
  while IFS= read -r p; do
    # Only paths this cluster created, and only while nothing mounts there.
    [ -n "${p}" ] && ! awk -v s="${p}" 'index($5, s) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo &&
      rm -rf --one-file-system "${p}"
  done <"${HOST_RECORD}/paths"
  rm -f "${HOST_RECORD}/paths"
fi

# 7. Check: nothing of ours may survive.
left=()
# Our daemons: Kubernetes binaries or containerd working on this state dir
# (someone else's kubectl or test apiserver is none of our business).
for p in /proc/[0-9]*; do
  exe="$(readlink "${p}/exe" 2>/dev/null)" || continue
  case "${exe}" in
    "${KUBE_BIN}"/* | /usr/bin/containerd*)
      grep -qF "${VIRT_STATE}/" < <(tr '\0' ' ' 2>/dev/null <"${p}/cmdline") &&
        left+=("process ${p#/proc/} ${exe}")
      ;;
  esac
done
for pid in $(shim_pids) $(pod_pids); do left+=("process ${pid} $(tr '\0' ' ' 2>/dev/null <"/proc/${pid}/cmdline" | cut -c1-100)"); done
for m in $(mounts_under_state); do left+=("mount ${m}"); done
ip link show "${BRIDGE}" >/dev/null 2>&1 && left+=("bridge ${BRIDGE}")
# The extra nodes': processes of their namespaces and cgroups are among
# the above (their daemons' command lines name the state directory).
for l in $(ip -o link show | awk -F': ' '{ print $2 }' | cut -d@ -f1 | grep -E "^(${NODE_NET_BRIDGE}|virtdevn[0-9]+)$" || true); do
  left+=("link ${l}")
done
for n in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^${NODE_NAME}-[0-9]+$" || true); do
  left+=("network namespace ${n}")
done
for d in /sys/fs/cgroup/*/"${NODE_NAME}"-[0-9]*; do
  [ -d "${d}" ] && left+=("cgroup ${d}")
done
ip route show | grep -q "^unreachable ${NODES_CIDR}" && left+=("route unreachable ${NODES_CIDR}")
if [ ${#left[@]} -gt 0 ]; then
  printf '  %s\n' "${left[@]}" >&2
  die "down: ${#left[@]} things survived (listed above)"
fi

if [ "${purge}" = 1 ]; then
  if [ -f "${HOST_RECORD}/cache-paths" ]; then
    while IFS= read -r p; do
      [ -n "${p}" ] && rm -rf --one-file-system "${p}"
    done <"${HOST_RECORD}/cache-paths"
  fi
  rm -rf --one-file-system "${VIRT_STATE}"
  log "purged ${VIRT_STATE}"
fi
log "cluster down ($(($(date +%s) - t0))s)"
