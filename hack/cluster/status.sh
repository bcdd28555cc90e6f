#!/usr/bin/env bash
# Reports the local cluster's daemons, one line each; exits 0 only when all
# of them run healthy (the e2e framework uses it to tell whether it attaches
# to a running cluster or brings one up).
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ok=0
check() {
  local name="$1" health="$2" pid
  if ! pid="$(pid_of "${name}")"; then
    echo "${name}: not running"
    ok=1
  elif ! "${health}"; then
    echo "${name}: pid ${pid}, unhealthy (log: ${LOG_DIR}/${name}.log)"
    ok=1
  else
    echo "${name}: pid ${pid}, healthy"
  fi
}
check etcd etcd_healthy
check kube-apiserver apiserver_ready
check kube-controller-manager kcm_healthy
check kube-scheduler scheduler_healthy
check containerd containerd_healthy
check kubelet kubelet_healthy
check kube-proxy kube_proxy_healthy
# The extra nodes (node.sh), those the cluster should have.
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"
for ((k = 2; k <= $(node_count); k++)); do
  (
    node_env "${k}"
    check "${NODE_NAME}-containerd" node_containerd_healthy
    check "${NODE_NAME}-kubelet" node_kubelet_healthy
    check "${NODE_NAME}-kube-proxy" node_kube_proxy_healthy
    exit "${ok}"
  ) || ok=1
done
# The platform's mode is not a daemon: reported, never failing the status
# (up.sh deploys whatever is missing).
mode="$(VIRT_HA="" platform_mode)"
if [ "${mode}" = ha ] && apiserver_ready; then
  ready() { kubectl -n virt-system get "$1" -o jsonpath='{.status.readyReplicas}' 2>/dev/null || true; }
  echo "platform: ha mode (etcd members ready: $(ready statefulset/virt-etcd)/3, virt-apiserver replicas ready: $(ready deployment/virt-apiserver)/2)"
else
  echo "platform: ${mode} mode"
fi
[ "${ok}" = 0 ] && echo "KUBECONFIG=${ADMIN_KUBECONFIG}"
exit "${ok}"
