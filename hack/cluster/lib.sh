# Settings and helpers of the local cluster scripts (up.sh, down.sh, ...).
# Sourced, never run.
#
# Every file the cluster owns lives under ${VIRT_STATE}; the few host paths
# that components hard-code (see host_paths) are recorded when first created
# and removed by down.sh. Every address is in 198.18.0.0/15.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

# Network. The bridge carries the pods; the host's address on it is the
# node's address, the kube-apiserver's and the pods' gateway.
BRIDGE="virtdev0"
HOST_IP="198.18.0.1"
POD_CIDR="198.18.0.0/24"
SERVICE_CIDR="198.19.0.0/24"
KUBERNETES_SERVICE_IP="198.19.0.1"
APISERVER_PORT=6443
APISERVER_URL="https://${HOST_IP}:${APISERVER_PORT}"
# etcd of kube-apiserver, on loopback and off the default ports so that an
# etcd someone else runs on this machine does not collide with it.
ETCD_CLIENT_URL="http://127.0.0.1:12379"
ETCD_PEER_URL="http://127.0.0.1:12380"
NODE_NAME="${VIRT_NODE_NAME:-virt-node}"
CNI_NETWORK="virt-dev"
# What the per-node configuration files (configs.sh) say. These are node
# 1's, the host's; hack/cluster/node.sh sets them for the extra nodes.
NODE_IP="${HOST_IP}"
POD_GATEWAY="${HOST_IP}"
KUBELET_EXTRA=""
# Every pod network of every node and the node network lie in NODES_CIDR:
# pods route it to their node, nodes to the host, and the host holds it
# unreachable beyond the routes of the nodes that exist, so none of it
# leaves the machine. Not the /15: SERVICE_CIDR must stay routable on the
# host, whose own connections to a ClusterIP are routed before kube-proxy's
# DNAT rewrites them.
NODES_CIDR="198.18.0.0/16"

PKI="${VIRT_STATE}/pki"
KUBECONFIGS="${VIRT_STATE}/kubeconfig"
ADMIN_KUBECONFIG="${KUBECONFIGS}/admin.kubeconfig"
CONFIG_DIR="${VIRT_STATE}/config"
RUN_DIR="${VIRT_STATE}/run"
LOG_DIR="${VIRT_STATE}/logs"
HOST_RECORD="${VIRT_STATE}/host"
CONTAINERD_SOCK="${RUN_DIR}/containerd.sock"
CONTAINERD_DIR="${VIRT_STATE}/containerd"
KUBELET_ROOT="${VIRT_STATE}/kubelet"
# Where virt-apiserver's embedded etcd keeps its data on this node.
VIRT_APISERVER_DATA="${VIRT_STATE}/virt-apiserver"
# The user virt-apiserver and virt-controller run as (their Deployments'
# runAsUser, the images' USER): it owns VIRT_APISERVER_DATA.
APISERVER_UID=65532
# Where the platform keeps its store (docs/cluster.md "HA mode"): "embedded"
# (one virt-apiserver with its own etcd, the default) or "ha" (replicas on
# an etcd cluster). VIRT_HA=1 or 0 (`make up HA=1`) chooses and deploy.sh
# remembers the choice here, so a plain `make up` keeps the mode.
PLATFORM_MODE_FILE="${VIRT_STATE}/platform-mode"

# Extra nodes (`make up NODES=N`, hack/cluster/node.sh, docs/cluster.md
# "More nodes"): node 1 is the host itself (NODE_NAME); node k >= 2 is
# NODE_NAME-k in a network and mount namespace of its own, on the node
# network NODE_NET_BRIDGE (host 198.18.255.1, node k 198.18.255.k), with
# the pod network 198.18.(k-1).0/24. VIRT_NODES chooses the count and
# up.sh remembers it here, so a plain `make up` keeps it.
NODES_FILE="${VIRT_STATE}/nodes"
NODES_DIR="${VIRT_STATE}/nodes.d"
NODE_NET_BRIDGE="virtdevn0"
NODE_NET_PREFIX="198.18.255"
MAX_NODES=9

# node_count prints the node count VIRT_NODES asks for, else the
# remembered one, else 1.
node_count() {
  local n="${VIRT_NODES:-}"
  [ -n "${n}" ] || n="$(cat "${NODES_FILE}" 2>/dev/null || echo 1)"
  [[ "${n}" =~ ^[1-9]$ ]] && [ "${n}" -le "${MAX_NODES}" ] ||
    die "VIRT_NODES (make up NODES=...) must be a number from 1 to ${MAX_NODES}, not ${n}"
  echo "${n}"
}

# node_name K prints the name of node K (1 is the host's).
node_name() { if [ "$1" = 1 ]; then echo "${NODE_NAME}"; else echo "${NODE_NAME}-$1"; fi; }

# existing_nodes prints the numbers of the extra nodes that have state
# (set up, running or not), ascending.
existing_nodes() {
  local d
  for d in "${NODES_DIR}/${NODE_NAME}"-[0-9]*; do
    [ -d "${d}" ] && echo "${d##*-}"
  done | sort -n
  return 0
}

# The sysctls the components change on the host: the kubelet's kernel
# tunables, the bridge plugin's forwarding, kube-proxy's conntrack and
# localnet settings. down.sh puts back what up.sh found.
SYSCTLS=(
  vm.overcommit_memory kernel.panic kernel.panic_on_oops
  net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables
  net.netfilter.nf_conntrack_max
  net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait
)
# Host paths outside ${VIRT_STATE} that the components create and cannot be
# told to put elsewhere: the kubelet's device-plugin directory, the CRI
# container-log symlinks, containerd's shim sockets, libcni's result cache.
HOST_PATHS=(/var/lib/kubelet /var/log/containers /run/containerd /var/lib/cni)
# Host caches the platform's pods keep on the node (hostPath volumes): the
# launchers' QEMU capabilities cache. Kept across down/up, removed with
# --purge when this cluster created them.
HOST_CACHE_PATHS=(/var/lib/virt)

# lock_state serialises up.sh and down.sh on one state directory (an e2e
# run and a developer's `make up`, say). The lock lives on fd 9, which
# start_daemon closes for the daemons.
lock_state() {
  mkdir -p "${VIRT_STATE}"
  exec 9>"${VIRT_STATE}/lock"
  if ! flock -n 9; then
    log "waiting for another up.sh or down.sh on ${VIRT_STATE}"
    flock -w 1800 9 || die "${VIRT_STATE} stayed locked for 30 min"
  fi
}

# platform_mode prints the mode VIRT_HA asks for, else the remembered one.
platform_mode() {
  case "${VIRT_HA:-}" in
    1 | true) echo ha ;;
    0 | false) echo embedded ;;
    "") cat "${PLATFORM_MODE_FILE}" 2>/dev/null || echo embedded ;;
    *) die "VIRT_HA (make up HA=...) must be 1 or 0, not ${VIRT_HA}" ;;
  esac
}

kubectl() { "${KUBE_BIN}/kubectl" --kubeconfig "${ADMIN_KUBECONFIG}" "$@"; }
ctr() { command ctr --address "${CONTAINERD_SOCK}" "$@"; }

pidfile() { echo "${RUN_DIR}/$1.pid"; }

# pid_of NAME prints the PID of a daemon started by start_daemon, if it still
# runs the same program (a recycled PID is not ours).
pid_of() {
  local f pid exe
  f="$(pidfile "$1")"
  [ -s "${f}" ] || return 1
  read -r pid exe <"${f}"
  [ -n "${pid}" ] && [ "$(readlink "/proc/${pid}/exe" 2>/dev/null)" = "${exe}" ] || return 1
  echo "${pid}"
}

running() { pid_of "$1" >/dev/null; }

# start_daemon NAME BINARY ARGS... starts BINARY in a session of its own (so
# that the caller's job control or a killed process group cannot take it
# down), logging to ${LOG_DIR}/NAME.log, and records its PID.
start_daemon() {
  local name="$1" bin="$2"
  shift 2
  mkdir -p "${RUN_DIR}" "${LOG_DIR}"
  printf '\n==== %s start: %s %s\n' "$(date -Is)" "${bin}" "$*" >>"${LOG_DIR}/${name}.log"
  # Every inherited descriptor beyond stdio is closed, the state lock (9)
  # among them: a daemon must not hold on to a lock its starter held, such
  # as the descriptor of `flock FILE make up`, which would keep FILE locked
  # for as long as the daemon runs.
  (
    for fd in /proc/self/fd/*; do
      fd="${fd##*/}"
      if [ "${fd}" -gt 2 ]; then eval "exec ${fd}>&-"; fi
    done
    exec setsid "${bin}" "$@" </dev/null >>"${LOG_DIR}/${name}.log" 2>&1
  ) &
  local pid=$!
  # setsid execs in place (the background job is not a group leader), so
  # $! is the daemon itself; wait until the exec happened before recording.
  # DAEMON_EXE: the program BINARY ends up as when it execs another
  # (nsenter for the extra nodes' daemons).
  local exe
  exe="$(readlink -f "${DAEMON_EXE:-${bin}}")"
  for _ in $(seq 50); do
    [ "$(readlink "/proc/${pid}/exe" 2>/dev/null)" = "${exe}" ] && break
    sleep 0.02
  done
  echo "${pid} ${exe}" >"$(pidfile "${name}")"
}

# stop_daemon NAME [SECONDS] sends SIGTERM, waits, then SIGKILL.
stop_daemon() {
  local name="$1" grace="${2:-15}" pid
  if pid="$(pid_of "${name}")"; then
    kill -TERM "${pid}" 2>/dev/null || true
    if ! wait_pid_gone "${pid}" "${grace}"; then
      log "${name} (pid ${pid}) ignored SIGTERM for ${grace}s: killing it"
      kill -KILL "${pid}" 2>/dev/null || true
      wait_pid_gone "${pid}" 5 || log "${name} (pid ${pid}) survived SIGKILL"
    fi
  fi
  rm -f "$(pidfile "${name}")"
}

wait_pid_gone() {
  local pid="$1" seconds="$2" i
  for ((i = 0; i < seconds * 10; i++)); do
    [ -e "/proc/${pid}" ] || return 0
    # A zombie whose parent is gone is as good as gone.
    [ "$(awk '/^State:/{print $2}' "/proc/${pid}/status" 2>/dev/null)" = "Z" ] && return 0
    sleep 0.1
  done
  return 1
}

# wait_for WHAT SECONDS COMMAND... polls COMMAND until it succeeds; on
# timeout it prints the end of WHAT's log and fails.
wait_for() {
  local what="$1" seconds="$2" deadline
  shift 2
  deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      if [ -f "${LOG_DIR}/${what}.log" ]; then
        log "last lines of ${LOG_DIR}/${what}.log:"
        tail -n 25 "${LOG_DIR}/${what}.log" >&2
      fi
      die "${what} not healthy after ${seconds}s (${*})"
    fi
    sleep 0.2
  done
}

# write_file PATH writes stdin to PATH when the content differs; it returns
# 0 when it changed the file, 1 when it was already up to date.
write_file() {
  local tmp
  mkdir -p "$(dirname "$1")"
  tmp="$(mktemp "$1.XXXXXX")"
  cat >"${tmp}"
  if [ -f "$1" ] && cmp -s "${tmp}" "$1"; then
    rm -f "${tmp}"
    return 1
  fi
  mv "${tmp}" "$1"
  return 0
}

# Health checks, one per daemon.
etcd_healthy() { [[ "$(curl -fsS --max-time 2 "${ETCD_CLIENT_URL}/health")" == *'"health":"true"'* ]]; }
apiserver_ready() { curl -fsS --max-time 3 --cacert "${PKI}/ca.crt" "${APISERVER_URL}/readyz" >/dev/null; }
kcm_healthy() { curl -fsSk --max-time 2 https://127.0.0.1:10257/healthz >/dev/null; }
scheduler_healthy() { curl -fsSk --max-time 2 https://127.0.0.1:10259/healthz >/dev/null; }
containerd_healthy() { ctr version >/dev/null 2>&1; }
kubelet_healthy() { curl -fsS --max-time 2 http://127.0.0.1:10248/healthz >/dev/null; }
kube_proxy_healthy() { curl -fsS --max-time 2 http://127.0.0.1:10256/healthz >/dev/null; }
node_ready() {
  [ "$(kubectl get node "${1:-${NODE_NAME}}" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = "True" ]
}
