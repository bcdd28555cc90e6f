#!/usr/bin/env bash
# Boots the example VM on the running local cluster, the last step of
# `make up`: creates artifacts/examples/vmi-tiny.yaml in the default
# namespace (unless it already runs), follows it to Running and to the
# guest's marker on its serial console, printing each step, and ends with
# what to try next. Also creates the Debian VM of
# artifacts/examples/vm-debian.yaml, stopped (runStrategy Halted: it needs
# the user's SSH key and a minute to boot under emulation). Idempotent: a
# running vmi-tiny and an existing vm-debian are left alone.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NS=default
NAME=vmi-tiny
TIMEOUT="${VIRT_EXAMPLE_TIMEOUT:-300}"
MARKER="VIRT-GUEST-READY ${NAME}"

jsonpath() { kubectl get vmi -n "${NS}" "${NAME}" -o "jsonpath=$1" 2>/dev/null; }

phase="$(jsonpath '{.status.phase}' || true)"
already=""
case "${phase}" in
  Running) log "${NAME} is already running"; already=1 ;;
  Succeeded|Failed)
    log "${NAME} ended (${phase}); replacing it"
    kubectl delete vmi -n "${NS}" "${NAME}" --wait=true --timeout=120s >/dev/null
    kubectl create -n "${NS}" -f "${ROOT}/artifacts/examples/vmi-tiny.yaml" >/dev/null ;;
  "")
    log "creating the example VM: kubectl create -f artifacts/examples/vmi-tiny.yaml"
    kubectl create -n "${NS}" -f "${ROOT}/artifacts/examples/vmi-tiny.yaml" >/dev/null ;;
  *) log "${NAME} is ${phase}" ;;
esac

# Follow the phases as the platform moves the VMI along.
start=$(date +%s)
last=""
while :; do
  phase="$(jsonpath '{.status.phase}' || true)"
  if [ "${phase}" != "${last}" ]; then
    log "  ${NAME}: ${phase:-<none>} after $(( $(date +%s) - start ))s"
    last="${phase}"
  fi
  case "${phase}" in
    Running) break ;;
    Succeeded|Failed)
      kubectl describe vmi -n "${NS}" "${NAME}" >&2 || true
      die "${NAME} ended ${phase} ($(jsonpath '{.status.reason}')) instead of running" ;;
  esac
  [ $(( $(date +%s) - start )) -lt "${TIMEOUT}" ] || {
    kubectl describe vmi -n "${NS}" "${NAME}" >&2 || true
    die "${NAME} not Running after ${TIMEOUT}s (phase ${phase:-none})"
  }
  sleep 0.5
done

# The serial log is in the pod's emptyDir on its node: an extra node's
# kubelet root is bound from below its directory (hack/cluster/node.sh).
node="$(jsonpath '{.status.nodeName}')"
pod_uid="$(kubectl get pods -n "${NS}" -l "virtualization.kubevirt.io/created-by=$(jsonpath '{.metadata.uid}')" \
  --field-selector "spec.nodeName=${node}" -o 'jsonpath={.items[0].metadata.uid}')"
kubelet_root="${KUBELET_ROOT}"
[ "${node}" = "${NODE_NAME}" ] || kubelet_root="${NODES_DIR}/${node}/binds/${KUBELET_ROOT//\//_}"
serial="${kubelet_root}/pods/${pod_uid}/volumes/kubernetes.io~empty-dir/virt-private/serial0.log"
if [ -n "${already}" ] && ! grep -q "${MARKER}" "${serial}" 2>/dev/null; then
  # Running before this run: its boot may have been printed in another pod
  # (a migration's source).
  log "  the guest was up already"
else
  while ! grep -q "${MARKER}" "${serial}" 2>/dev/null; do
    [ $(( $(date +%s) - start )) -lt "${TIMEOUT}" ] || die "no '${MARKER}' on the serial console (${serial}) after ${TIMEOUT}s"
    sleep 0.5
  done
  log "  the guest is up: '$(grep -m1 -o "${MARKER}.*" "${serial}")' on its serial console after $(( $(date +%s) - start ))s"
fi
emulation="$(jsonpath '{.status.conditions[?(@.type=="SoftwareEmulation")].status}')"
[ "${emulation}" != "True" ] || log "  (under software emulation: this machine has no usable hardware virtualisation)"

if [ -z "$(kubectl get vm -n "${NS}" vm-debian -o name --ignore-not-found)" ]; then
  log "creating the Debian VM, stopped: kubectl create -f artifacts/examples/vm-debian.yaml"
  kubectl create -n "${NS}" -f "${ROOT}/artifacts/examples/vm-debian.yaml" >/dev/null
fi

cat <<EOF

The platform runs, with an example VM. Try:

  export KUBECONFIG=${ADMIN_KUBECONFIG}
  export PATH=${KUBE_BIN}:\$PATH
  kubectl get vmi -o wide                  # NAME AGE PHASE IP NODENAME READY ...
  kubectl get vmi -w                       # watch phases change
  kubectl describe vmi ${NAME}             # conditions and events
  virtctl console ${NAME}                  # log in on its serial console (Ctrl+] leaves)
  kubectl virt console ${NAME}             # the same, as a kubectl plugin
  virtctl vnc screenshot ${NAME} --file ${NAME}.png   # a picture of its screen
  virtctl pause vmi ${NAME}                # its vCPUs stop (unpause resumes them)
  sudo tail -f ${serial}
                                           # the serial log the node keeps
  kubectl create -f artifacts/examples/vm-always.yaml   # a VM that keeps its guest running
  virtctl stop vm-always                   # its guest shuts down and it stays stopped
  virtctl start vm-always                  # a new instance
  virtctl restart vm-always                # the instance replaced by a new one
  kubectl delete vmi ${NAME}               # ACPI shutdown, then the pod and the VMI go

  # A Debian 12 VM with cloud-init, created stopped: put your SSH key in
  # first (docs/getting-started.md), then
  virtctl start vm-debian                  # SSH after about a minute under emulation
  ssh debian@\$(kubectl get vmi vm-debian -o jsonpath='{.status.interfaces[0].ipAddress}')

  make down                                # stop everything (PURGE=1 also drops the state)
EOF
