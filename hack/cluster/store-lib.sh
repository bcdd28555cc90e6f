# How backup.sh and restore.sh reach and describe the platform's store, in
# either mode (docs/cluster.md "Backup and restore"). Sourced after lib.sh,
# never run.
#
# The store is an etcd: in the embedded mode the one inside the single
# virt-apiserver (apiserver/etcd: plain HTTP on the pod's loopback, no
# authentication: only a port-forward reaches it), in the HA mode the
# members of the StatefulSet virt-etcd (TLS with client certificates: the
# operator's virt-etcd-admin of certs.sh, whose members' certificate names
# 127.0.0.1 for exactly this port-forward).

# STORE_PREFIX is where virt-apiserver keeps its objects (apiserver/options.go
# etcdPrefix): /registry/<group>/<resource>/<namespace>/<name>.
STORE_PREFIX="/registry/"
APISERVER_SELECTOR="virtualization.kubevirt.io/component=virt-apiserver"
ETCD_SELECTOR="virtualization.kubevirt.io/component=virt-etcd"
APISERVICE="v1.virtualization.kubevirt.io"
# Backups live outside ${VIRT_STATE}: `make down PURGE=1` must not take them.
BACKUP_DIR="${VIRT_BACKUPS:-${VIRT_CACHE}/backups}"

# etcd_tools sets ETCDCTL and ETCDUTL to the HA mode's etcd tools (the
# version of the platform's etcd; built once by build-etcd.sh, cached).
etcd_tools() {
  local dir
  dir="$("${ROOT}/hack/build-etcd.sh")" || die "cannot build etcdctl and etcdutl (hack/build-etcd.sh)"
  ETCDCTL="${dir}/etcdctl"
  ETCDUTL="${dir}/etcdutl"
}

# require_cluster fails unless the local cluster's API answers to us.
require_cluster() {
  [ -r "${ADMIN_KUBECONFIG}" ] ||
    die "cannot read ${ADMIN_KUBECONFIG}: run as root (sudo), and bring the cluster up with make up if it never ran"
  apiserver_ready ||
    die "the local cluster is not running (kube-apiserver at ${APISERVER_URL} does not answer): make up first"
}

# store_mode prints the platform's mode and fails when the deployed
# platform is not in it: a half-done `make up HA=...` leaves no store to
# back up or restore.
store_mode() {
  local mode args
  mode="$(VIRT_HA="" platform_mode)"
  args="$(kubectl -n virt-system get deployment virt-apiserver -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null)" ||
    die "the platform is not deployed (no Deployment virt-system/virt-apiserver): make up first"
  case "${mode}" in
    embedded)
      [[ "${args}" != *--etcd-servers* ]] ||
        die "${PLATFORM_MODE_FILE} says embedded, but virt-apiserver runs on an etcd cluster (--etcd-servers): finish the switch with make up HA=1 or HA=0"
      ;;
    ha)
      [[ "${args}" == *--etcd-servers* ]] && kubectl -n virt-system get statefulset virt-etcd >/dev/null 2>&1 ||
        die "${PLATFORM_MODE_FILE} says ha, but the etcd cluster virt-etcd is not deployed or virt-apiserver does not use it: finish the switch with make up HA=1 or HA=0"
      ;;
    *) die "unknown platform mode '${mode}' in ${PLATFORM_MODE_FILE}: expected embedded or ha" ;;
  esac
  echo "${mode}"
}

# ready_pods SELECTOR prints the names of the Ready, not deleting pods of
# virt-system that SELECTOR matches.
ready_pods() {
  kubectl -n virt-system get pods -l "$1" -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name} {.metadata.deletionTimestamp} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    awk 'NF == 2 && $2 == "True" { print $1 }'
}

# PORT_FORWARD_PID and LOCAL_PORT are set by port_forward.
PORT_FORWARD_PID=""
LOCAL_PORT=""

# port_forward POD PORT forwards a free port of this host's loopback to
# PORT on POD's loopback (kubectl port-forward dials the pod's localhost),
# sets LOCAL_PORT, and leaves the forwarder running until stop_port_forward.
port_forward() {
  local pod="$1" port="$2" out i
  out="$(mktemp)"
  "${KUBE_BIN}/kubectl" --kubeconfig "${ADMIN_KUBECONFIG}" -n virt-system port-forward "pod/${pod}" \
    --address 127.0.0.1 ":${port}" >"${out}" 2>&1 &
  PORT_FORWARD_PID=$!
  for ((i = 0; i < 100; i++)); do
    LOCAL_PORT="$(sed -n "s/^Forwarding from 127.0.0.1:\([0-9]*\) -> ${port}\$/\1/p" "${out}")"
    [ -n "${LOCAL_PORT}" ] && break
    if ! kill -0 "${PORT_FORWARD_PID}" 2>/dev/null; then
      log "kubectl port-forward to ${pod}:${port} failed: $(cat "${out}")"
      rm -f "${out}"
      PORT_FORWARD_PID=""
      return 1
    fi
    sleep 0.1
  done
  rm -f "${out}"
  [ -n "${LOCAL_PORT}" ] || {
    log "kubectl port-forward to ${pod}:${port} did not start within 10 s"
    stop_port_forward
    return 1
  }
}

stop_port_forward() {
  if [ -n "${PORT_FORWARD_PID}" ]; then
    kill "${PORT_FORWARD_PID}" 2>/dev/null || true
    wait "${PORT_FORWARD_PID}" 2>/dev/null || true
    PORT_FORWARD_PID=""
  fi
}

# etcdctl_at runs etcdctl against the forwarded port in MODE's way.
etcdctl_at() {
  local mode="$1"
  shift
  if [ "${mode}" = ha ]; then
    "${ETCDCTL}" --endpoints="https://127.0.0.1:${LOCAL_PORT}" --cacert="${PKI}/virt-etcd-ca.crt" \
      --cert="${PKI}/virt-etcd-admin.crt" --key="${PKI}/virt-etcd-admin.key" --command-timeout=30s "$@"
  else
    "${ETCDCTL}" --endpoints="http://127.0.0.1:${LOCAL_PORT}" --command-timeout=30s "$@"
  fi
}

# snapshot_field FILE FIELD prints a number of `etcdutl snapshot status`.
snapshot_field() {
  "${ETCDUTL}" snapshot status "$1" -w json 2>/dev/null | grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

# metadata_field FILE FIELD prints a top-level field of a backup's
# metadata file as backup.sh writes it (one field per line).
metadata_field() {
  sed -n "s/^  \"$2\": \"\{0,1\}\([^\"]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1" | head -n1
}

# seconds_since T prints the seconds since T (date +%s.%N), to a tenth.
seconds_since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
