#!/usr/bin/env bash
# The local cluster's extra nodes (`make up NODES=N`, docs/cluster.md "More
# nodes"): node k >= 2 is a real kubelet, containerd and kube-proxy of the
# same build as node 1 (the host), isolated the way kind isolates its nodes
# but without a container around them:
#   - a network namespace of its own (/run/netns/NAME) with one veth to the
#     host's node-network bridge NODE_NET_BRIDGE: the node's address is
#     198.18.255.k, its only routes 198.18.0.0/16 (the nodes and their
#     pods) and the service range via the host (no default
#     route: nothing leaves the machine); its pods' bridge virtdevK, pod
#     network 198.18.(k-1).0/24, routed by the host through the node;
#   - a persistent mount namespace (bound on ${RUN_DIR}/nodes/NAME.mnt)
#     where the node's own directories are bound over the very paths node 1
#     uses (the kubelet's root and cert dirs, pod logs, CNI state, and the
#     host paths /var/lib/kubelet, /run/containerd, /var/lib/cni,
#     /var/log/containers, /var/lib/virt), so the DaemonSets' hostPaths and
#     the configuration files mean on every node what they mean on node 1;
#   - a cgroup parent /NAME in every hierarchy (the kubelet's cgroupRoot);
#   - its own containerd (socket, root and state in its directory under
#     ${NODES_DIR}), CNI configuration, client and serving certificates.
# Its daemons are started by start_daemon like node 1's, through nsenter,
# and named NAME-containerd, NAME-kubelet, NAME-kube-proxy.
#
# Sourced by up.sh, down.sh and status.sh for the functions; run, it is the
# operators' and the tests' handle on one node:
#   node.sh list                 the extra nodes with state, one a line
#   node.sh start NAME           start its daemons (what up.sh does for it)
#   node.sh stop NAME            stop its daemons, then kill what is left
#                                (its pods' processes, shims), no drain
#   node.sh kill NAME            SIGKILL every process of the node at once:
#                                daemons, shims, its pods' processes (QEMU)
# stop and kill leave the Node object, the namespaces and the state: the
# node is down as a machine that lost power is, and `start` boots it again.
# Needs root.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -o errexit -o nounset -o pipefail
  source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
  source "$(dirname "${BASH_SOURCE[0]}")/configs.sh"
fi

# The host's node: NODE_NAME is overridden inside node_env.
FIRST_NODE="${NODE_NAME}"
NODES_MNT_DIR="${RUN_DIR}/nodes"
NODE_NET_HOST_IP="${NODE_NET_PREFIX}.1"
# What `ip netns add` creates on a host that had no network namespaces: a
# mount of /run/netns on itself. down.sh removes it when up.sh created it.
NETNS_DIR="/run/netns"

# node_env K sets, in the calling (sub)shell, everything that is node K's
# own: its name, addresses, directories and the settings configs.sh writes
# its files from. Call it in a subshell.
node_env() {
  local k="$1"
  NODE_K="${k}"
  NODE_NAME="${FIRST_NODE}-${k}"
  NODE_IP="${NODE_NET_PREFIX}.${k}"
  POD_CIDR="198.18.$((k - 1)).0/24"
  POD_GATEWAY="198.18.$((k - 1)).1"
  BRIDGE="virtdev${k}"
  CNI_NETWORK="virt-dev-${k}"
  NODE_DIR="${NODES_DIR}/${NODE_NAME}"
  CONFIG_DIR="${NODE_DIR}/config"
  CONTAINERD_DIR="${NODE_DIR}/containerd"
  CONTAINERD_SOCK="${NODE_DIR}/run/containerd.sock"
  NODE_MNT="${NODES_MNT_DIR}/${NODE_NAME}.mnt"
  NODE_NETNS="${NETNS_DIR}/${NODE_NAME}"
  NODE_VETH="virtdevn${k}"
  KUBELET_EXTRA="# Node ${k} of the local cluster (hack/cluster/node.sh).
cgroupRoot: /${NODE_NAME}
tlsCertFile: ${PKI}/kubelet-serving-${NODE_NAME}.crt
tlsPrivateKeyFile: ${PKI}/kubelet-serving-${NODE_NAME}.key"
}

# node_number NAME prints K of node NAME (an extra node).
node_number() {
  local k="${1#"${FIRST_NODE}"-}"
  [[ "$1" == "${FIRST_NODE}-"* && "${k}" =~ ^[2-9]$ ]] ||
    die "${1}: not an extra node of this cluster (${FIRST_NODE}-2 ... ${FIRST_NODE}-${MAX_NODES})"
  echo "${k}"
}

# The paths bound per node inside its mount namespace: the node's copy is
# ${NODE_DIR}/binds/<path with / as _>.
node_bind_paths() {
  echo "${KUBELET_ROOT}" "${VIRT_STATE}/kubelet-pki" "${VIRT_STATE}/pod-logs" "${VIRT_STATE}/cni" \
    /var/lib/kubelet /run/containerd /var/lib/cni /var/log/containers
  # Only a cache of the launchers' from before issue 23: bound when the host has it.
  [ -d /var/lib/virt ] && echo /var/lib/virt
  return 0
}

node_changed() { if "$@"; then echo 1; else echo 0; fi; }
in_netns() { nsenter --net="${NODE_NETNS}" -- "$@"; }
mnt_bound() { awk -v f="$1" '$5 == f { found = 1 } END { exit !found }' /proc/self/mountinfo; }

node_containerd_healthy() { ctr version >/dev/null 2>&1; }
node_kubelet_healthy() { in_netns curl -fsS --max-time 2 http://127.0.0.1:10248/healthz >/dev/null; }
node_kube_proxy_healthy() { in_netns curl -fsS --max-time 2 http://127.0.0.1:10256/healthz >/dev/null; }
node_is_ready() { node_ready "${NODE_NAME}"; }

# node_net_up: the node network's bridge on the host, the node's network
# namespace, its veth and routes. Idempotent.
node_net_up() {
  if ! ip link show "${NODE_NET_BRIDGE}" >/dev/null 2>&1; then
    ip link add "${NODE_NET_BRIDGE}" type bridge
  fi
  [[ "$(ip -4 addr show dev "${NODE_NET_BRIDGE}")" == *"inet ${NODE_NET_HOST_IP}/"* ]] ||
    ip addr add "${NODE_NET_HOST_IP}/24" dev "${NODE_NET_BRIDGE}"
  ip link set "${NODE_NET_BRIDGE}" up
  # The host routes between the nodes.
  sysctl -qw net.ipv4.ip_forward=1
  if [ ! -e "${NODE_NETNS}" ]; then
    [ -d "${NETNS_DIR}" ] || { mkdir -p "${HOST_RECORD}" && touch "${HOST_RECORD}/netns-dir"; }
    ip netns add "${NODE_NAME}"
  fi
  if ! ip link show "${NODE_VETH}" >/dev/null 2>&1; then
    ip link add "${NODE_VETH}" type veth peer name eth0 netns "${NODE_NAME}"
  fi
  ip link set "${NODE_VETH}" master "${NODE_NET_BRIDGE}" up
  in_netns ip link set lo up
  in_netns ip addr replace "${NODE_IP}/24" dev eth0
  in_netns ip link set eth0 up
  in_netns ip route replace "${NODES_CIDR}" via "${NODE_NET_HOST_IP}"
  in_netns ip route replace "${SERVICE_CIDR}" via "${NODE_NET_HOST_IP}"
  # The node forwards between its pods' bridge and eth0.
  in_netns sysctl -qw net.ipv4.ip_forward=1
  ip route replace "${POD_CIDR}" via "${NODE_IP}"
}

# node_cgroups_up: the node's cgroup parent in every hierarchy (the kubelet
# refuses a cgroupRoot that does not exist); cpuset needs its CPUs and
# memory nodes before it can hold a task.
node_cgroups_up() {
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -f "${h}cgroup.procs" ] || continue
    mkdir -p "${h}${NODE_NAME}"
    if [ -f "${h}cpuset.cpus" ]; then
      [ -n "$(cat "${h}${NODE_NAME}/cpuset.cpus")" ] || cat "${h}cpuset.cpus" >"${h}${NODE_NAME}/cpuset.cpus"
      [ -n "$(cat "${h}${NODE_NAME}/cpuset.mems")" ] || cat "${h}cpuset.mems" >"${h}${NODE_NAME}/cpuset.mems"
    fi
  done
}

# node_mnt_up: the node's mount namespace, kept alive by a bind of it on
# NODE_MNT (which must sit on a private mount: NODES_MNT_DIR). In it the
# cluster's mounts copied from the host (node 1's pods, the other nodes'
# namespace files) are dropped, so the node holds nothing of theirs, and
# the node's directories are bound over the shared paths. The node's
# own mounts (its pods') live and die with this namespace: the host never
# sees them.
node_mnt_up() {
  mkdir -p "${NODES_MNT_DIR}"
  if ! mnt_bound "${NODES_MNT_DIR}"; then
    mount --bind "${NODES_MNT_DIR}" "${NODES_MNT_DIR}"
    mount --make-private "${NODES_MNT_DIR}"
  fi
  mnt_bound "${NODE_MNT}" && return 0
  local p binds=()
  for p in $(node_bind_paths); do
    mkdir -p "${p}" "${NODE_DIR}/binds/${p//\//_}"
    binds+=("${NODE_DIR}/binds/${p//\//_}" "${p}")
  done
  touch "${NODE_MNT}"
  unshare --mount="${NODE_MNT}" --propagation private bash -c '
    set -e
    state="$1" cache="$2"
    shift 2
    awk -v s="${state}" -v c="${cache}" '\''index($5, s "/") == 1 || index($5, c "/") == 1 ||
      $5 == "/run/netns" || index($5, "/run/netns/") == 1 ||
      index($5, "/var/lib/kubelet/") == 1 || index($5, "/run/containerd/") == 1 { print $5 }'\'' /proc/self/mountinfo |
      sort -r | while read -r m; do umount -l "${m}" 2>/dev/null || true; done
    # Shared, as on the host: the kubelet hands its root to pods with
    # mountPropagation HostToContainer (virt-handler), which the runtime
    # allows only from a shared or slave mount.
    while [ $# -gt 0 ]; do mount --bind "$1" "$2" && mount --make-shared "$2"; shift 2; done' \
    _ "${VIRT_STATE}" "${VIRT_CACHE}" "${binds[@]}"
}

# node_ensure NAME CHANGED SECONDS HEALTH BINARY ARGS... is up.sh's ensure
# for a daemon of this node: left alone when it runs healthy with the same
# command line and configuration, else (re)started inside the node's
# namespaces.
node_ensure() {
  local name="${NODE_NAME}-$1" changed="$2" seconds="$3" health="$4" pid
  shift 4
  if pid="$(pid_of "${name}")"; then
    if [ "${changed}" = 0 ] && cmp -s <(tr '\0' '\n' <"/proc/${pid}/cmdline") <(printf '%s\n' "$@"); then
      local i
      for i in $(seq 50); do
        "${health}" && return 0
        sleep 0.2
      done
      log "${name} (pid ${pid}) runs but is not healthy: restarting it"
    else
      log "${name}: configuration changed, restarting it"
    fi
    stop_daemon "${name}"
  fi
  log "starting ${name}"
  DAEMON_EXE="$1" start_daemon "${name}" /usr/bin/nsenter --mount="${NODE_MNT}" --net="${NODE_NETNS}" -- "$@"
  wait_for "${name}" "${seconds}" "${health}"
}

# node_import_images imports the images of images.tags (written by
# `images.sh --import` for node 1) into this node's containerd, those it
# lacks, and drops older content tags, as images.sh does for node 1.
node_import_images() {
  local have name ref old t
  have="$(ctr -n k8s.io images ls -q)"
  while read -r name ref; do
    [ -n "${ref}" ] || continue
    if ! grep -qxF "${ref}" <<<"${have}"; then
      t=$(date +%s)
      ctr -n k8s.io images import "${VIRT_CACHE}/images/${name}-${ref##*:}.tar" >/dev/null
      log "${NODE_NAME}: imported ${ref} ($(($(date +%s) - t))s)"
    fi
    for old in $(grep -E "^localhost/${name}:[0-9a-f]{12}$" <<<"${have}" | grep -vxF "${ref}" || true); do
      ctr -n k8s.io images rm "${old}" >/dev/null
    done
  done <"${VIRT_STATE}/images.tags"
}

# node_up K brings node K up (or checks it): namespaces, cgroups,
# configuration, containerd, images, kubelet (until Ready), kube-proxy.
node_up() (
  node_env "$1"
  local t0=$(date +%s)
  mkdir -p "${NODE_DIR}/run" "${CONTAINERD_DIR}"
  node_cgroups_up
  node_net_up
  node_mnt_up
  cni_config || true
  node_ensure containerd "$(node_changed containerd_config)" 30 node_containerd_healthy \
    /usr/bin/containerd --config="${CONFIG_DIR}/containerd.toml"
  node_import_images
  node_ensure kubelet "$(node_changed kubelet_config)" 30 node_kubelet_healthy \
    "${KUBE_BIN}/kubelet" \
    --config="${CONFIG_DIR}/kubelet.yaml" \
    --kubeconfig="${KUBECONFIGS}/kubelet-${NODE_NAME}.kubeconfig" \
    --root-dir="${KUBELET_ROOT}" --cert-dir="${VIRT_STATE}/kubelet-pki" \
    --hostname-override="${NODE_NAME}" --node-ip="${NODE_IP}"
  wait_for "${NODE_NAME}-kubelet" 60 node_is_ready
  node_ensure kube-proxy "$(node_changed kube_proxy_config)" 30 node_kube_proxy_healthy \
    "${KUBE_BIN}/kube-proxy" --config="${CONFIG_DIR}/kube-proxy.yaml"
  log "${NODE_NAME} is up ($(($(date +%s) - t0))s)"
)

# node_pids prints the PIDs of every process of the node: those in its
# mount namespace (its daemons, containerd's shims) and those in its
# cgroups (its pods' processes, QEMU among them).
node_pids() {
  if mnt_bound "${NODE_MNT}"; then
    # One stat for all: a readlink per process takes seconds.
    stat -L -c '%i %n' /proc/[0-9]*/ns/mnt 2>/dev/null |
      awk -v i="$(stat -L -c %i "${NODE_MNT}")" '$1 == i { split($2, p, "/"); print p[3] }'
  fi
  find /sys/fs/cgroup/*/"${NODE_NAME}" -name cgroup.procs -exec cat {} + 2>/dev/null
  return 0
}

# node_kill_all SIGKILLs every process of the node until none is left.
node_kill_all() {
  local pids i
  for i in $(seq 20); do
    pids="$(node_pids | sort -u)"
    [ -z "${pids}" ] && break
    kill -KILL ${pids} 2>/dev/null || true
    sleep 0.2
  done
  pids="$(node_pids | sort -u)"
  [ -z "${pids}" ] || log "${NODE_NAME}: processes survived SIGKILL: ${pids//$'\n'/ }"
  rm -f "$(pidfile "${NODE_NAME}-kubelet")" "$(pidfile "${NODE_NAME}-kube-proxy")" \
    "$(pidfile "${NODE_NAME}-containerd")"
}

# node_stop stops the daemons (SIGTERM: the kubelet stops syncing, it
# drains nothing), kills the pods' containers through containerd, then
# whatever of the node is left.
node_stop() {
  stop_daemon "${NODE_NAME}-kube-proxy"
  stop_daemon "${NODE_NAME}-kubelet"
  if running "${NODE_NAME}-containerd"; then
    local id
    for id in $(ctr -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -n k8s.io tasks kill -s SIGKILL "${id}" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon "${NODE_NAME}-containerd"
  node_kill_all
}

# node_teardown stops the node and removes its namespaces, veth, routes
# and cgroups; its state stays (node_remove deletes it).
node_teardown() (
  node_env "$1"
  node_stop
  if mnt_bound "${NODE_MNT}"; then umount "${NODE_MNT}" || umount -l "${NODE_MNT}"; fi
  rm -f "${NODE_MNT}"
  ip route del "${POD_CIDR}" 2>/dev/null || true
  ip link del "${NODE_VETH}" 2>/dev/null || true
  [ -e "${NODE_NETNS}" ] && ip netns del "${NODE_NAME}"
  local h
  for h in /sys/fs/cgroup/*/"${NODE_NAME}"; do
    [ -d "${h}" ] && find "${h}" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
)

# node_remove K: node K leaves the cluster for good (`make up NODES=...`
# below K): stopped without a drain, its Node deleted (the pod garbage
# collector then deletes its pods), its namespaces and state removed.
node_remove() {
  local name
  name="$(node_name "$1")"
  log "removing node ${name}"
  node_teardown "$1"
  kubectl delete node "${name}" --ignore-not-found --wait=false >/dev/null
  rm -rf --one-file-system "${NODES_DIR:?}/${name}"
}

# nodes_net_down removes what the extra nodes share on the host once none
# is left: the node network's bridge, the private mount under which their
# mount namespaces were bound, /run/netns when up.sh created it.
nodes_net_down() {
  ip link del "${NODE_NET_BRIDGE}" 2>/dev/null || true
  if mnt_bound "${NODES_MNT_DIR}"; then umount "${NODES_MNT_DIR}" || umount -l "${NODES_MNT_DIR}"; fi
  if [ -f "${HOST_RECORD}/netns-dir" ] && [ -d "${NETNS_DIR}" ] && [ -z "$(ls -A "${NETNS_DIR}")" ]; then
    while mnt_bound "${NETNS_DIR}"; do umount "${NETNS_DIR}" || break; done
    rmdir "${NETNS_DIR}" && rm -f "${HOST_RECORD}/netns-dir"
  fi
  return 0
}

# nodes_reconcile brings up nodes 2..COUNT and removes those above COUNT.
nodes_reconcile() {
  local count="$1" k
  for k in $(existing_nodes); do
    [ "${k}" -gt "${count}" ] && node_remove "${k}"
  done
  # The namespaces one after the other (they share the bridge and
  # /run/netns, which the first creates), then the nodes in parallel: a
  # fresh node spends most of its time importing images.
  for ((k = 2; k <= count; k++)); do
    (node_env "${k}" && node_cgroups_up && node_net_up && node_mnt_up)
  done
  local pids=() failed=0 p
  for ((k = 2; k <= count; k++)); do
    node_up "${k}" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "${p}" || failed=1; done
  [ "${failed}" = 0 ] || die "an extra node did not come up (its log lines above)"
  [ "${count}" -gt 1 ] || nodes_net_down
  echo "${count}" >"${NODES_FILE}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  [ "$(id -u)" -eq 0 ] || die "the local cluster's nodes need root"
  case "${1:-}" in
    list)
      for k in $(existing_nodes); do node_name "${k}"; done
      ;;
    start | stop | kill)
      [ $# -eq 2 ] || die "usage: $0 $1 NODE"
      k="$(node_number "$2")"
      [ -d "${NODES_DIR}/$2" ] || die "$2 has no state: bring it up with make up NODES=${k} first"
      lock_state
      case "$1" in
        start) node_up "${k}" ;;
        stop) (node_env "${k}" && node_stop) ;;
        kill) (node_env "${k}" && node_kill_all) ;;
      esac
      ;;
    *) die "usage: $0 list | start NODE | stop NODE | kill NODE" ;;
  esac
fi
