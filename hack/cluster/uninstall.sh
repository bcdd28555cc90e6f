#!/usr/bin/env bash
# Removes the platform from the local cluster, leaving the cluster running
# (`make down` stops that), in the order that never leaves an APIService
# without its server (docs/runbooks.md "Uninstalling in a safe order"):
#   1. every VM, VMI replica set and VMI, while the platform still runs to
#      shut the guests down and remove its finalizers (up to
#      VIRT_UNINSTALL_GRACE seconds, default 180; what is left then has its
#      finalizers dropped, and is listed);
#   2. the APIService v1.virtualization.kubevirt.io;
#   3. the rest of the deployed kustomization (${VIRT_STATE}/deploy, or the
#      directory given), the namespace virt-system with it.
# virt-apiserver's data (${VIRT_STATE}/virt-apiserver) and the HA store's
# claims stay for a later `make up`.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kustomization="${1:-${VIRT_STATE}/deploy}"
grace="${VIRT_UNINSTALL_GRACE:-180}"
apiservice=v1.virtualization.kubevirt.io
group=virtualization.kubevirt.io
t0=$(date +%s)
apiserver_ready || die "the cluster's kube-apiserver does not answer"

available="$(kubectl get apiservice "${apiservice}" --ignore-not-found \
  -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')"
if [ "${available}" = True ]; then
  # 1. Migrations first (virt-controller cancels them), then VMs (they
  # would recreate their VMIs), then replica sets, then the VMIs themselves.
  for kind in virtualmachineinstancemigrations virtualmachines virtualmachineinstancereplicasets virtualmachineinstances; do
    kubectl delete "${kind}.${group}" --all --all-namespaces --wait=false >/dev/null
  done
  log "deleting the platform's VMs, replica sets and VMIs (up to ${grace}s)"
  deadline=$((t0 + grace))
  while [ -n "$(kubectl get "virtualmachineinstances.${group}" -A -o name 2>/dev/null)" ] &&
    [ "$(date +%s)" -lt "${deadline}" ]; do
    sleep 1
  done
  for kind in virtualmachineinstancemigrations virtualmachines virtualmachineinstancereplicasets virtualmachineinstances; do
    while read -r ns name; do
      [ -n "${name}" ] || continue
      log "${kind} ${ns}/${name} still there after ${grace}s: dropping its finalizers"
      kubectl patch "${kind}.${group}" -n "${ns}" "${name}" --type=merge \
        -p '{"metadata":{"finalizers":null}}' >/dev/null || true
    done < <(kubectl get "${kind}.${group}" -A --no-headers \
      -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name 2>/dev/null || true)
  done
else
  log "the APIService ${apiservice} is not Available (${available:-absent}): the platform's objects stay in its store"
fi

# 2. The APIService before what serves it.
kubectl delete apiservice "${apiservice}" --ignore-not-found >/dev/null
log "APIService ${apiservice} deleted"

# 3. The rest.
if [ -f "${kustomization}/kustomization.yaml" ]; then
  kubectl delete -k "${kustomization}" --ignore-not-found --wait=true --timeout=300s >/dev/null
else
  kubectl delete namespace virt-system --ignore-not-found --wait=true --timeout=300s >/dev/null
fi
log "platform uninstalled ($(($(date +%s) - t0))s)"
