#!/usr/bin/env bash
# Brings up the local single-node Kubernetes and deploys the platform into
# it: etcd, kube-apiserver (with the aggregation layer), kube-controller-
# manager, kube-scheduler, containerd, kubelet, kube-proxy, the cluster DNS
# (dns.sh), the storage provisioner (local-path.sh), then the platform's
# images and artifacts/.
# Idempotent: what runs healthy with its current configuration is left
# alone, so a second run is a quick check.
# Prints the KUBECONFIG to use. Needs root.
set -o errexit -o nounset -o pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "${here}/lib.sh"
source "${here}/configs.sh"
source "${here}/node.sh"

[ "$(id -u)" -eq 0 ] || die "the local cluster needs root (containerd, kubelet, bridge)"
t0=$(date +%s)
lock_state
nodes="$(node_count)"
"${ROOT}/hack/install-deps.sh"
"${ROOT}/hack/build-kube.sh"
"${here}/certs.sh"

# record_host notes, once per cluster life, what the cluster will change on
# the host, so that down.sh can put it back.
record_host() {
  mkdir -p "${HOST_RECORD}"
  if [ ! -f "${HOST_RECORD}/sysctl" ]; then
    local s v
    for s in "${SYSCTLS[@]}"; do
      v="$(sysctl -n "${s}" 2>/dev/null)" && echo "${s}=${v}"
    done >"${HOST_RECORD}/sysctl.tmp"
    mv "${HOST_RECORD}/sysctl.tmp" "${HOST_RECORD}/sysctl"
  fi
  if [ ! -f "${HOST_RECORD}/cache-paths" ]; then
    local c
    for c in "${HOST_CACHE_PATHS[@]}"; do
      [ -e "${c}" ] || echo "${c}"
    done >"${HOST_RECORD}/cache-paths"
  fi
  if [ ! -f "${HOST_RECORD}/paths" ]; then
    local p
    for p in "${HOST_PATHS[@]}"; do
      [ -e "${p}" ] || echo "${p}"
    done >"${HOST_RECORD}/paths.tmp"
    mv "${HOST_RECORD}/paths.tmp" "${HOST_RECORD}/paths"
  fi
}

# The bridge exists before anything starts: its address is the one the
# kube-apiserver and the kubelet bind to. The CNI plugin adopts it.
ensure_bridge() {
  ip link show "${BRIDGE}" >/dev/null 2>&1 || ip link add "${BRIDGE}" type bridge
  [[ "$(ip -4 addr show dev "${BRIDGE}")" == *"inet ${HOST_IP}/"* ]] ||
    ip addr add "${HOST_IP}/${POD_CIDR#*/}" dev "${BRIDGE}"
  ip link set "${BRIDGE}" up
  # The pods' and nodes' range beyond the routes of the nodes that exist
  # is unreachable: pods route all of it to their node, and the host's
  # default route must not take it off the machine.
  ip route replace unreachable "${NODES_CIDR}"
  # The first version of the nodes held all of 198.18.0.0/15, services
  # included, which breaks the host's connections to a ClusterIP.
  ip route del unreachable 198.18.0.0/15 2>/dev/null || true
}

# ensure NAME CHANGED SECONDS HEALTH BINARY ARGS... leaves a daemon alone when
# it runs healthy with the same command line and configuration; otherwise it
# (re)starts it and waits until HEALTH succeeds.
ensure() {
  local name="$1" changed="$2" seconds="$3" health="$4" pid
  shift 4
  if pid="$(pid_of "${name}")"; then
    if [ "${changed}" = 0 ] && cmp -s <(tr '\0' '\n' <"/proc/${pid}/cmdline") <(printf '%s\n' "$@"); then
      # Running as wanted: give a daemon that is still starting a moment.
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
  start_daemon "${name}" "$@"
  wait_for "${name}" "${seconds}" "${health}"
}

changed() { if "$@"; then echo 1; else echo 0; fi; }

record_host
ensure_bridge
mkdir -p "${VIRT_STATE}/etcd" "${VIRT_STATE}/cni/ipam" "${VIRT_STATE}/pod-logs" \
  "${KUBELET_ROOT}" "${VIRT_STATE}/kubelet-pki" "${VIRT_APISERVER_DATA}"
chmod 700 "${VIRT_STATE}/etcd"

ensure etcd "$(changed etcd_config)" 30 etcd_healthy \
  "${KUBE_BIN}/etcd" --config-file="${CONFIG_DIR}/etcd.yaml"

ensure kube-apiserver "$(changed admission_config)" 90 apiserver_ready \
  "${KUBE_BIN}/kube-apiserver" \
  --bind-address="${HOST_IP}" --advertise-address="${HOST_IP}" --secure-port="${APISERVER_PORT}" \
  --etcd-servers="${ETCD_CLIENT_URL}" \
  --service-cluster-ip-range="${SERVICE_CIDR}" \
  --tls-cert-file="${PKI}/apiserver.crt" --tls-private-key-file="${PKI}/apiserver.key" \
  --client-ca-file="${PKI}/ca.crt" \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
  --allow-privileged=true \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="${PKI}/sa.pub" --service-account-signing-key-file="${PKI}/sa.key" \
  --kubelet-client-certificate="${PKI}/apiserver-kubelet-client.crt" \
  --kubelet-client-key="${PKI}/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP \
  --requestheader-client-ca-file="${PKI}/front-proxy-ca.crt" \
  --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User --requestheader-uid-headers=X-Remote-Uid \
  --requestheader-group-headers=X-Remote-Group --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="${PKI}/front-proxy-client.crt" \
  --proxy-client-key-file="${PKI}/front-proxy-client.key" \
  --enable-aggregator-routing=true \
  --admission-control-config-file="${CONFIG_DIR}/admission.yaml"

ensure kube-controller-manager 0 30 kcm_healthy \
  "${KUBE_BIN}/kube-controller-manager" \
  --kubeconfig="${KUBECONFIGS}/controller-manager.kubeconfig" \
  --authentication-kubeconfig="${KUBECONFIGS}/controller-manager.kubeconfig" \
  --authorization-kubeconfig="${KUBECONFIGS}/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
  --service-account-private-key-file="${PKI}/sa.key" --root-ca-file="${PKI}/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file="${PKI}/ca.crt" --cluster-signing-key-file="${PKI}/ca.key" \
  --service-cluster-ip-range="${SERVICE_CIDR}" --cluster-name=virt-dev

ensure kube-scheduler 0 30 scheduler_healthy \
  "${KUBE_BIN}/kube-scheduler" \
  --kubeconfig="${KUBECONFIGS}/scheduler.kubeconfig" \
  --authentication-kubeconfig="${KUBECONFIGS}/scheduler.kubeconfig" \
  --authorization-kubeconfig="${KUBECONFIGS}/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false

cni_config || true
ensure containerd "$(changed containerd_config)" 30 containerd_healthy \
  /usr/bin/containerd --config="${CONFIG_DIR}/containerd.toml"

# Images before the kubelet: its first sandbox needs the pause image.
"${here}/images.sh" --import

ensure kubelet "$(changed kubelet_config)" 30 kubelet_healthy \
  "${KUBE_BIN}/kubelet" \
  --config="${CONFIG_DIR}/kubelet.yaml" \
  --kubeconfig="${KUBECONFIGS}/kubelet.kubeconfig" \
  --root-dir="${KUBELET_ROOT}" --cert-dir="${VIRT_STATE}/kubelet-pki" \
  --hostname-override="${NODE_NAME}" --node-ip="${HOST_IP}"
wait_for kubelet 60 node_ready
# The host's node carries the control plane: the cluster's add-ons and
# virt-apiserver's embedded store stay on it (docs/cluster.md "More nodes").
kubectl label node "${NODE_NAME}" node-role.kubernetes.io/control-plane= --overwrite >/dev/null

ensure kube-proxy "$(changed kube_proxy_config)" 30 kube_proxy_healthy \
  "${KUBE_BIN}/kube-proxy" --config="${CONFIG_DIR}/kube-proxy.yaml"

# The extra nodes (`make up NODES=N`, node.sh), before the platform so that
# its DaemonSets roll out on every node; nodes above N are removed.
nodes_reconcile "${nodes}"

# The cluster's DNS, Service kube-dns at the kubelet's clusterDNS
# (docs/cluster.md), before anything that looks up a Service by name.
"${here}/dns.sh"

# The cluster's storage before the platform: the default StorageClass
# local-path (docs/cluster.md).
"${here}/local-path.sh"

log "Kubernetes ${KUBE_VERSION} is up ($(($(date +%s) - t0))s); deploying the platform"
"${here}/deploy.sh"

# virtctl (built with the images' static commands, images.sh) next to the
# cluster's kubectl (the PATH printed at the end), and the same binary as
# the kubectl plugin kubectl-virt (`kubectl virt ...`). build-kube.sh
# empties KUBE_BIN when it rebuilds, so it is put back here.
log "installing virtctl and kubectl-virt into ${KUBE_BIN}"
install -m 0755 "${ROOT}/_output/images/bin/virtctl" "${KUBE_BIN}/virtctl"
ln -sfn virtctl "${KUBE_BIN}/kubectl-virt"
# etcdctl and etcdutl of the HA mode's etcd (docs/cluster.md "HA mode"),
# once built (images.sh).
if "${ROOT}/hack/build-etcd.sh" --cached >/dev/null; then
  "${ROOT}/hack/build-etcd.sh" --install "${KUBE_BIN}" >/dev/null
fi

log "cluster ready in $(($(date +%s) - t0))s. Use it with:"
echo "export KUBECONFIG=${ADMIN_KUBECONFIG}"
