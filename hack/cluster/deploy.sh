#!/usr/bin/env bash
# Deploys the platform into the local cluster: writes the per-machine
# kustomization ${VIRT_STATE}/deploy on top of artifacts/overlays/local
# (virt-apiserver's serving certificate and the APIService's caBundle, the
# guest-access certificates of virt-handler and virt-apiserver, the content
# tags of the images images.sh imported, paths under ${VIRT_STATE}),
# applies it with kubectl apply -k, and waits until the workloads rolled out
# and the APIService is Available; then applies the common instancetypes and
# preferences (artifacts/instancetypes), which only virt-apiserver serves.
# Components whose image was not built
# (their cmd/ has not landed yet) are left out, their RBAC is not.
#
# The platform's mode (lib.sh platform_mode; `make up HA=1`, docs/cluster.md
# "HA mode"): embedded deploys overlays/local; ha deploys overlays/ha (the
# etcd cluster with the Secrets of its CA, two virt-apiserver replicas on
# it) and waits for three healthy members too. Going back to embedded
# deletes what only the HA mode has, except the etcd members' claims.
# A switch carries the store (apiserver/store carry.go): `virt-apiserver
# store carry-out` stops virt-apiserver and snapshots the old mode's store,
# the new mode's store is deployed told to start from that snapshot only
# (VIRT_STORE_AWAIT_SNAPSHOT), and `store carry-in` hands it over: every VM
# and VMI is there after the switch and the guests keep running.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode="$(platform_mode)"
previous="$(cat "${PLATFORM_MODE_FILE}" 2>/dev/null || echo embedded)"
overlay=local
[ "${mode}" = ha ] && overlay=ha
# What overlays/ha adds to overlays/local besides its Secrets (labelled
# virtualization.kubevirt.io/mode=ha); the StatefulSet's claims stay.
HA_ONLY=(statefulset/virt-etcd service/virt-etcd service/virt-etcd-client
  poddisruptionbudget/virt-etcd poddisruptionbudget/virt-apiserver)
ETCD_MEMBERS=(virt-etcd-0 virt-etcd-1 virt-etcd-2)

DEPLOY="${VIRT_STATE}/deploy"
mkdir -p "${DEPLOY}"
# The snapshots switches carried, and per mode the sha256 of the one its
# store started from: rendered into every later deploy of that mode, so
# that a plain make up does not change the store's pod template.
CARRY="${VIRT_STATE}/store-carry"
# virt-apiserver as images.sh built it for this host: the store's operations.
store_cmd() {
  "${ROOT}/_output/images/bin/virt-apiserver" store "$@" --kubeconfig "${ADMIN_KUBECONFIG}"
}

t0=$(date +%s)
carry_file=""
if [ "${previous}" != "${mode}" ] && [ -n "$(kubectl -n virt-system get deployment virt-apiserver -o name --ignore-not-found)" ]; then
  mkdir -p "${CARRY}"
  carry_file="${CARRY}/$(date -u +%Y%m%dT%H%M%SZ)-${previous}.db"
  log "switching the platform from the ${previous} to the ${mode} mode: carrying the store"
  sha="$(store_cmd carry-out --file "${carry_file}" --etcd-cafile "${PKI}/virt-etcd-ca.crt" \
    --etcd-certfile "${PKI}/virt-etcd-admin.crt" --etcd-keyfile "${PKI}/virt-etcd-admin.key")" ||
    die "deploy: cannot take the ${previous} store along (virt-apiserver store carry-out); it is unchanged, virt-apiserver may be stopped: make up HA=$([ "${previous}" = ha ] && echo 1 || echo 0) restarts it"
  echo "${sha}" | write_file "${CARRY}/${mode}.sha256" || true
fi
carry_sha="$(cat "${CARRY}/${mode}.sha256" 2>/dev/null || true)"
install -m 600 "${PKI}/virt-apiserver.crt" "${DEPLOY}/tls.crt"
install -m 600 "${PKI}/virt-apiserver.key" "${DEPLOY}/tls.key"
# Guest access (docs/guest-access.md): the virt-handler CA for the handlers
# (a ConfigMap: they hold no shared key), the handler serving CA and its key
# for virt-controller's signer, virt-apiserver's client certificate with the
# handler serving CA.
rm -rf "${DEPLOY}/guest-access"
mkdir -p "${DEPLOY}/guest-access"
for f in virt-handler-ca.crt virt-handler-serving-ca.crt virt-handler-serving-ca.key \
  virt-apiserver-handler-client.crt virt-apiserver-handler-client.key; do
  install -m 600 "${PKI}/${f}" "${DEPLOY}/guest-access/${f}"
done
# Live migration (docs/migration.md): the handler migration CA, its key for
# virt-controller's signer, its certificate for the handlers (a ConfigMap).
rm -rf "${DEPLOY}/migration"
mkdir -p "${DEPLOY}/migration"
for f in virt-handler-migration-ca.crt virt-handler-migration-ca.key; do
  install -m 600 "${PKI}/${f}" "${DEPLOY}/migration/${f}"
done
# The HA mode's etcd CA, the members' certificate and virt-apiserver's
# client certificate (certs.sh makes them in either mode).
rm -rf "${DEPLOY}/etcd"
if [ "${mode}" = ha ]; then
  mkdir -p "${DEPLOY}/etcd"
  for f in virt-etcd-ca.crt virt-etcd.crt virt-etcd.key \
    virt-apiserver-etcd-client.crt virt-apiserver-etcd-client.key; do
    install -m 600 "${PKI}/${f}" "${DEPLOY}/etcd/${f}"
  done
fi

# tag_of NAME prints the content tag images.sh imported NAME under.
tag_of() {
  awk -v n="$1" '$1 == n { sub(/.*:/, "", $2); print $2 }' "${VIRT_STATE}/images.tags" 2>/dev/null
}

workloads=(Deployment:virt-apiserver Deployment:virt-controller DaemonSet:virt-handler)
{
  cat <<EOF
# Generated by hack/cluster/deploy.sh; rewritten by every \`make up\`.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  # kustomize takes only relative paths to other kustomizations.
  - $(realpath --relative-to="${DEPLOY}" "${ROOT}/artifacts/overlays/${overlay}")
secretGenerator:
  - name: virt-apiserver-tls
    namespace: virt-system
    type: kubernetes.io/tls
    files: [tls.crt, tls.key]
  - name: virt-controller-handler-serving-ca
    namespace: virt-system
    type: kubernetes.io/tls
    files:
      - tls.crt=guest-access/virt-handler-serving-ca.crt
      - tls.key=guest-access/virt-handler-serving-ca.key
  - name: virt-controller-handler-migration-ca
    namespace: virt-system
    type: kubernetes.io/tls
    files:
      - tls.crt=migration/virt-handler-migration-ca.crt
      - tls.key=migration/virt-handler-migration-ca.key
  - name: virt-apiserver-handler-client-tls
    namespace: virt-system
    type: kubernetes.io/tls
    files:
      - ca.crt=guest-access/virt-handler-serving-ca.crt
      - tls.crt=guest-access/virt-apiserver-handler-client.crt
      - tls.key=guest-access/virt-apiserver-handler-client.key
EOF
  if [ "${mode}" = ha ]; then
    cat <<EOF
  - name: virt-etcd-tls
    namespace: virt-system
    type: kubernetes.io/tls
    options: {labels: {virtualization.kubevirt.io/mode: ha}}
    files: [ca.crt=etcd/virt-etcd-ca.crt, tls.crt=etcd/virt-etcd.crt, tls.key=etcd/virt-etcd.key]
  - name: virt-apiserver-etcd-client-tls
    namespace: virt-system
    type: kubernetes.io/tls
    options: {labels: {virtualization.kubevirt.io/mode: ha}}
    files:
      - ca.crt=etcd/virt-etcd-ca.crt
      - tls.crt=etcd/virt-apiserver-etcd-client.crt
      - tls.key=etcd/virt-apiserver-etcd-client.key
EOF
  fi
  cat <<EOF
configMapGenerator:
  - name: virt-handler-guest-access-ca
    namespace: virt-system
    files: [ca.crt=guest-access/virt-handler-ca.crt]
  - name: virt-handler-migration-ca
    namespace: virt-system
    files: [ca.crt=migration/virt-handler-migration-ca.crt]
EOF
  echo "images:"
  for w in "${workloads[@]}"; do
    n="${w#*:}"
    t="$(tag_of "${n}")"
    [ -n "${t}" ] && echo "  - {name: localhost/${n}, newTag: \"${t}\"}"
  done
  # virt-handler's init container runs the launcher image.
  t="$(tag_of virt-launcher)"
  [ -n "${t}" ] && echo "  - {name: localhost/virt-launcher, newTag: \"${t}\"}"
  t="$(tag_of virt-etcd)"
  if [ "${mode}" = ha ] && [ -n "${t}" ]; then
    echo "  - {name: localhost/virt-etcd, newTag: \"${t}\"}"
  fi
  cat <<EOF
patches:
  - target: {kind: APIService, name: v1.virtualization.kubevirt.io}
    patch: |
      - {op: add, path: /spec/caBundle, value: $(base64 -w0 "${PKI}/virt-apiserver-ca.crt")}
  - target: {kind: ValidatingWebhookConfiguration, name: virt-launcher-eviction}
    patch: |
      - {op: add, path: /webhooks/0/clientConfig/caBundle, value: $(base64 -w0 "${PKI}/virt-apiserver-ca.crt")}
  # The kube-apiserver calls webhooks as this user (certs.sh, configs.sh).
  - target: {kind: Deployment, name: virt-apiserver}
    patch: |
      - {op: add, path: /spec/template/spec/containers/0/args/-, value: --eviction-webhook-callers=kube-apiserver-webhook-client}
EOF
  if [ "${mode}" = embedded ]; then
    cat <<EOF
  - patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: virt-apiserver, namespace: virt-system}
      spec: {template: {spec: {volumes: [{name: data, hostPath: {path: ${VIRT_APISERVER_DATA}}}]}}}
EOF
  fi
  if [ -n "${carry_sha}" ] && [ "${mode}" = embedded ]; then
    cat <<EOF
  - patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: virt-apiserver, namespace: virt-system}
      spec: {template: {spec: {containers: [{name: virt-apiserver, env: [{name: VIRT_STORE_AWAIT_SNAPSHOT, value: "${carry_sha}"}]}]}}}
EOF
  elif [ -n "${carry_sha}" ]; then
    cat <<EOF
  - patch: |
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: virt-etcd, namespace: virt-system}
      spec: {template: {spec: {initContainers: [{name: restore, env: [{name: VIRT_STORE_AWAIT_SNAPSHOT, value: "${carry_sha}"}]}]}}}
EOF
  fi
  cat <<EOF
  - patch: |
      apiVersion: apps/v1
      kind: DaemonSet
      metadata: {name: virt-handler, namespace: virt-system}
      spec: {template: {spec: {volumes: [{name: kubelet-root, hostPath: {path: ${KUBELET_ROOT}}}]}}}
EOF
  t="$(tag_of virt-launcher)"
  if [ -n "${t}" ]; then
    cat <<EOF
  - patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: virt-controller, namespace: virt-system}
      spec: {template: {spec: {containers: [{name: virt-controller, env: [{name: LAUNCHER_IMAGE, value: "localhost/virt-launcher:${t}"}]}]}}}
EOF
  fi
  for w in "${workloads[@]}"; do
    n="${w#*:}"
    if [ -z "$(tag_of "${n}")" ]; then
      cat <<EOF
  - patch: |
      \$patch: delete
      apiVersion: apps/v1
      kind: ${w%%:*}
      metadata: {name: ${n}, namespace: virt-system}
EOF
    fi
  done
  # An APIService nobody serves would stall discovery and namespace
  # deletion cluster-wide.
  if [ -z "$(tag_of virt-apiserver)" ]; then
    cat <<EOF
  - patch: |
      \$patch: delete
      apiVersion: apiregistration.k8s.io/v1
      kind: APIService
      metadata: {name: v1.virtualization.kubevirt.io}
EOF
  fi
} | write_file "${DEPLOY}/kustomization.yaml" || true

# etcd_healthy_members prints how many members etcdctl finds healthy, asked
# from inside the first member: through the headless Service's names, TLS
# and the etcd CA, as virt-apiserver reaches them.
etcd_healthy_members() {
  local endpoints="" m
  for m in "${ETCD_MEMBERS[@]}"; do endpoints+="${endpoints:+,}https://${m}.virt-etcd.virt-system.svc:2379"; done
  kubectl -n virt-system exec virt-etcd-0 -c etcd -- etcdctl --endpoints="${endpoints}" \
    --cacert=/etc/etcd/tls/ca.crt --cert=/etc/etcd/tls/tls.crt --key=/etc/etcd/tls/tls.key \
    --command-timeout=5s endpoint health 2>&1 | grep -c ' is healthy: ' || true
}

# virt-apiserver runs as uid 65532 (docs/security.md); its embedded etcd's
# directory is a hostPath here, which no fsGroup reaches, and an earlier
# virt-apiserver ran as root: the data is handed over once, with the old
# replica stopped so that it writes no new root-owned file meanwhile, and
# started again after the apply (which leaves a replica count it did not
# change as it finds it).
handed_over=0
if [ "${mode}" = embedded ]; then
  if [ -n "$(find "${VIRT_APISERVER_DATA}" ! -uid "${APISERVER_UID}" -print -quit 2>/dev/null)" ]; then
    if [ -n "$(kubectl -n virt-system get deployment virt-apiserver -o name --ignore-not-found)" ]; then
      log "virt-apiserver runs as uid ${APISERVER_UID} now: stopping it to hand its data over (once)"
      kubectl -n virt-system scale deployment/virt-apiserver --replicas=0 >/dev/null
      sel=virtualization.kubevirt.io/component=virt-apiserver
      kubectl -n virt-system wait --for=delete pod -l "${sel}" --timeout=120s >/dev/null 2>&1 ||
        [ -z "$(kubectl -n virt-system get pods -l "${sel}" -o name)" ] ||
        die "deploy: virt-apiserver's pods did not stop within 120s"
    fi
    chown -R "${APISERVER_UID}:${APISERVER_UID}" "${VIRT_APISERVER_DATA}"
    handed_over=1
  fi
  chmod 700 "${VIRT_APISERVER_DATA}"
fi
echo "${mode}" | write_file "${PLATFORM_MODE_FILE}" || true
out="$(kubectl apply -k "${DEPLOY}" 2>&1)" || die "deploy: kubectl apply -k ${DEPLOY} failed: ${out}"
grep -v ' unchanged$' <<<"${out}" >&2 || true
if [ -n "${carry_file}" ]; then
  store_cmd carry-in --file "${carry_file}" ||
    die "deploy: the ${mode} store did not start from the ${previous} store's snapshot ${carry_file} (virt-apiserver store carry-in); kubectl -n virt-system get pods"
  log "the ${mode} store starts from the ${previous} store's snapshot ($(($(date +%s) - t0))s)"
fi
if [ "${handed_over}" = 1 ]; then
  kubectl -n virt-system scale deployment/virt-apiserver --replicas=1 >/dev/null
fi
if [ "${mode}" = ha ]; then
  # The members first: virt-apiserver's replicas are ready only with them.
  kubectl -n virt-system rollout status statefulset/virt-etcd --timeout=300s >/dev/null ||
    die "deploy: the etcd cluster did not come up; kubectl -n virt-system describe pods -l virtualization.kubevirt.io/component=virt-etcd"
  deadline=$(($(date +%s) + 60))
  until [ "$(etcd_healthy_members)" = "${#ETCD_MEMBERS[@]}" ]; do
    [ "$(date +%s)" -lt "${deadline}" ] ||
      die "deploy: not all ${#ETCD_MEMBERS[@]} etcd members healthy after 60s"
    sleep 1
  done
  log "etcd cluster: ${#ETCD_MEMBERS[@]} members healthy ($(($(date +%s) - t0))s)"
  # Replicas started with the members give up on an etcd without quorum
  # (exit 1 after ~20 s) and are restarted; restarted once, a replica
  # waits out the kubelet's crash back-off (10 s and more) the next time it
  # dies for the next 10 minutes. New pods start with a clean count.
  restarts="$(kubectl -n virt-system get pods -l virtualization.kubevirt.io/component=virt-apiserver \
    -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{" "}{end}')"
  if [ -n "$(tr -d ' 0' <<<"${restarts}")" ]; then
    log "virt-apiserver replicas restarted while etcd formed its quorum (${restarts% }): rolling them for a clean back-off"
    kubectl -n virt-system rollout restart deployment/virt-apiserver >/dev/null
  fi
fi
for w in "${workloads[@]}"; do
  n="${w#*:}"
  [ -n "$(tag_of "${n}")" ] || continue
  kubectl -n virt-system rollout status "${w%%:*}/${n}" --timeout=180s >/dev/null ||
    die "deploy: ${n} did not roll out; kubectl -n virt-system describe pods; logs under ${KUBELET_ROOT}/../pod-logs"
done
if [ -n "$(tag_of virt-apiserver)" ]; then
  if [ "${mode}" = ha ]; then
    kubectl -n virt-system wait --for=jsonpath='{.status.readyReplicas}'=2 deployment/virt-apiserver --timeout=60s >/dev/null ||
      die "deploy: virt-apiserver has not 2 ready replicas"
  fi
  # Polled rather than `kubectl wait`: a wait whose watch breaks while the
  # aggregator reloads fails at once, even when the APIService turns
  # Available a moment later (seen: "not Available: all checks passed").
  deadline=$(($(date +%s) + 90))
  until [ "$(kubectl get apiservice v1.virtualization.kubevirt.io \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ] ||
    [ "$(date +%s)" -ge "${deadline}" ]; do
    sleep 1
  done
  [ "$(kubectl get apiservice v1.virtualization.kubevirt.io \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ] ||
    die "deploy: APIService v1.virtualization.kubevirt.io not Available: $(kubectl get apiservice v1.virtualization.kubevirt.io -o jsonpath='{.status.conditions[0].message}')"
  # The common instancetypes and preferences (artifacts/instancetypes) are
  # objects virt-apiserver serves: applied only now that it serves them.
  # The aggregator's discovery may lag the rollout by a few seconds.
  deadline=$(($(date +%s) + 60))
  until out="$(kubectl apply -k "${ROOT}/artifacts/instancetypes" 2>&1)"; do
    [ "$(date +%s)" -lt "${deadline}" ] ||
      die "deploy: kubectl apply -k artifacts/instancetypes failed: ${out}"
    sleep 2
  done
  grep -v ' unchanged$' <<<"${out}" >&2 || true
fi
if [ "${mode}" = embedded ]; then
  # Foreground: done when the members' pods are gone. Their claims stay.
  out="$(kubectl -n virt-system delete "${HA_ONLY[@]}" --ignore-not-found --cascade=foreground --timeout=120s 2>&1)" ||
    die "deploy: deleting the HA mode's objects failed: ${out}"
  [ -z "${out}" ] || log "left the HA mode: ${out//$'\n'/, }"
  kubectl -n virt-system delete secret -l virtualization.kubevirt.io/mode=ha --ignore-not-found >/dev/null
fi
log "platform deployed in ${mode} mode ($(($(date +%s) - t0))s)"
