#!/usr/bin/env bash
# Generates the local cluster's PKI under ${VIRT_STATE}/pki with openssl, and
# the kubeconfigs of its clients under ${VIRT_STATE}/kubeconfig. Existing
# files are kept, so a restarted cluster keeps its identities; remove the
# directories (down.sh --purge) to start over.
#
# A leaf certificate that expires within RENEW_DAYS is issued again (same
# key, same names) by the next run, so \`make up\` renews them before they
# lapse; CAs are kept.
#
# Keys are ECDSA P-256: every component accepts them and they are generated
# in milliseconds, where RSA keys cost seconds each on this machine.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DAYS=3650
RENEW_DAYS=30
mkdir -p "${PKI}" "${KUBECONFIGS}"
chmod 700 "${PKI}"

key() {
  [ -s "$1" ] || openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null
}

# ca NAME CN: a self-signed certificate authority.
ca() {
  local name="$1" cn="$2"
  [ -s "${PKI}/${name}.crt" ] && return
  key "${PKI}/${name}.key"
  openssl req -x509 -new -sha256 -key "${PKI}/${name}.key" -days "${DAYS}" -subj "/CN=${cn}" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "${PKI}/${name}.crt"
}

# fresh CRT: CRT exists and is valid for more than RENEW_DAYS.
fresh() {
  [ -s "$1" ] && openssl x509 -noout -checkend $((RENEW_DAYS * 86400)) -in "$1" >/dev/null
}

# cert NAME CA SUBJECT USAGE [SANS]: a leaf certificate signed by CA; USAGE
# is serverAuth, clientAuth or both; SANS like "DNS:a,IP:198.18.0.1".
cert() {
  local name="$1" ca="$2" subj="$3" usage="$4" sans="${5:-}"
  fresh "${PKI}/${name}.crt" && return
  key "${PKI}/${name}.key"
  local ext
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=${usage}"
    [ -n "${sans}" ] && echo "subjectAltName=${sans}"
  } >"${ext}"
  openssl req -new -sha256 -key "${PKI}/${name}.key" -subj "${subj}" |
    openssl x509 -req -sha256 -days "${DAYS}" -CA "${PKI}/${ca}.crt" -CAkey "${PKI}/${ca}.key" \
      -set_serial "0x$(openssl rand -hex 16)" -extfile "${ext}" -out "${PKI}/${name}.crt" 2>/dev/null
  rm -f "${ext}"
}

# kubeconfig NAME CERT: a kubeconfig that authenticates with PKI/CERT.
kubeconfig() {
  local f="${KUBECONFIGS}/$1.kubeconfig" user="$1"
  [ -s "${f}" ] && return
  local k=("${KUBE_BIN}/kubectl" --kubeconfig "${f}.tmp")
  "${k[@]}" config set-cluster virt-dev --server="${APISERVER_URL}" \
    --certificate-authority="${PKI}/ca.crt" --embed-certs >/dev/null
  "${k[@]}" config set-credentials "${user}" --client-certificate="${PKI}/$2.crt" \
    --client-key="${PKI}/$2.key" --embed-certs >/dev/null
  "${k[@]}" config set-context virt-dev --cluster=virt-dev --user="${user}" >/dev/null
  "${k[@]}" config use-context virt-dev >/dev/null
  chmod 600 "${f}.tmp"
  mv "${f}.tmp" "${f}"
}

# The cluster CA signs the serving and client certificates of Kubernetes;
# the front-proxy CA only the aggregator's client certificate, which
# aggregated servers trust for the identity headers it forwards.
ca ca "virt-dev-ca"
ca front-proxy-ca "virt-dev-front-proxy-ca"
# virt-apiserver's serving certificate has a CA of its own: it is the
# APIService's caBundle and must not be able to vouch for anything else.
ca virt-apiserver-ca "virt-apiserver-ca"
# Guest access (docs/guest-access.md) has two. The virt-handler CA signs
# virt-apiserver's client certificate, and only the handlers trust it. The
# handler serving CA signs the handlers' per-node serving certificates
# (virt-controller's CSR signer holds its key), and only virt-apiserver
# trusts it: the signer's key cannot make a client that reaches a guest,
# and virt-apiserver's client key cannot answer as a handler.
ca virt-handler-ca "virt-handler-ca"
ca virt-handler-serving-ca "virt-handler-serving-ca"
# Live migration (docs/migration.md) has one more: the handler migration CA
# signs the handlers' per-node migration identities (clientAuth+serverAuth,
# virt-controller's second CSR signer holds its key), and only the handlers
# trust it, for migrations only: it cannot make a guest-access client or
# serving certificate, and those cannot carry a migration.
ca virt-handler-migration-ca "virt-handler-migration-ca"

cert apiserver ca "/CN=kube-apiserver" serverAuth \
  "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:${HOST_IP},IP:${KUBERNETES_SERVICE_IP},IP:127.0.0.1"
cert apiserver-kubelet-client ca "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert front-proxy-client front-proxy-ca "/CN=front-proxy-client" clientAuth
cert admin ca "/O=system:masters/CN=virt-dev-admin" clientAuth
cert controller-manager ca "/CN=system:kube-controller-manager" clientAuth
cert scheduler ca "/CN=system:kube-scheduler" clientAuth
cert kube-proxy ca "/CN=system:kube-proxy" clientAuth
cert kubelet ca "/O=system:nodes/CN=system:node:${NODE_NAME}" clientAuth
# The kube-apiserver's identity when it calls admission webhooks (its
# AdmissionConfiguration, configs.sh): virt-apiserver's eviction webhook
# answers only this user (--eviction-webhook-callers, deploy.sh).
cert kube-apiserver-webhook-client ca "/CN=kube-apiserver-webhook-client" clientAuth
cert virt-apiserver virt-apiserver-ca "/CN=virt-apiserver.virt-system.svc" serverAuth \
  "DNS:virt-apiserver.virt-system.svc,DNS:virt-apiserver.virt-system.svc.cluster.local,DNS:virt-apiserver.virt-system,DNS:virt-apiserver"

# Guest access: only the client name virt-apiserver gets through to a
# handler. The handlers' serving certificates are not made here: each
# handler requests its node's through the certificates.k8s.io API.
cert virt-apiserver-handler-client virt-handler-ca "/CN=virt-apiserver" clientAuth

# The etcd cluster of the HA mode (artifacts/etcd, docs/cluster.md "HA
# mode") has a CA of its own: it signs only the members' certificate and
# etcd's clients, and etcd trusts nothing else on either port.
# One certificate serves every member, as server and as peer client: the
# members are pods of one template, so they mount one Secret and
# per-member keys would sit in every member's pod anyway; the wildcard lets
# the StatefulSet grow without a new certificate. The headless Service's
# own name is there for etcd's check of a peer's client certificate, which
# resolves the certificate's names to find the peer's address (it resolves
# to every member, ready or not); the CN is the one name etcd accepts as a
# peer (--peer-cert-allowed-cn), so etcd's clients cannot act as members.
ca virt-etcd-ca "virt-etcd-ca"
etcd_names="DNS:*.virt-etcd.virt-system.svc,DNS:*.virt-etcd.virt-system.svc.cluster.local"
etcd_names+=",DNS:virt-etcd.virt-system.svc,DNS:virt-etcd.virt-system.svc.cluster.local"
etcd_names+=",DNS:virt-etcd-client.virt-system.svc,DNS:virt-etcd-client.virt-system.svc.cluster.local"
cert virt-etcd virt-etcd-ca "/CN=virt-etcd" serverAuth,clientAuth "${etcd_names},DNS:localhost,IP:127.0.0.1"
cert virt-apiserver-etcd-client virt-etcd-ca "/CN=virt-apiserver" clientAuth
# An operator's etcdctl on this machine (and the e2e tests): never in the
# cluster.
cert virt-etcd-admin virt-etcd-ca "/CN=virt-etcd-admin" clientAuth

# Service-account token signing key pair.
if [ ! -s "${PKI}/sa.pub" ]; then
  key "${PKI}/sa.key"
  openssl ec -in "${PKI}/sa.key" -pubout -out "${PKI}/sa.pub" 2>/dev/null
fi
chmod 600 "${PKI}"/*.key

kubeconfig admin admin
# The webhooks' credentials, by the host the kube-apiserver calls: no
# cluster or context, only the user entry named by the Service's DNS name.
if [ ! -s "${KUBECONFIGS}/webhook-client.kubeconfig" ]; then
  "${KUBE_BIN}/kubectl" --kubeconfig "${KUBECONFIGS}/webhook-client.kubeconfig.tmp" config set-credentials \
    virt-apiserver.virt-system.svc --client-certificate="${PKI}/kube-apiserver-webhook-client.crt" \
    --client-key="${PKI}/kube-apiserver-webhook-client.key" --embed-certs >/dev/null
  chmod 600 "${KUBECONFIGS}/webhook-client.kubeconfig.tmp"
  mv "${KUBECONFIGS}/webhook-client.kubeconfig.tmp" "${KUBECONFIGS}/webhook-client.kubeconfig"
fi
kubeconfig controller-manager controller-manager
kubeconfig scheduler scheduler
kubeconfig kube-proxy kube-proxy
kubeconfig kubelet kubelet

# The extra nodes' (hack/cluster/node.sh): each kubelet's client identity,
# its own (NodeRestriction lets it touch its Node and its pods only), and
# a serving certificate for its node address, where node 1's kubelet makes
# its own.
for ((k = 2; k <= $(node_count); k++)); do
  n="$(node_name "${k}")"
  cert "kubelet-${n}" ca "/O=system:nodes/CN=system:node:${n}" clientAuth
  cert "kubelet-serving-${n}" ca "/CN=${n}" serverAuth "DNS:${n},IP:${NODE_NET_PREFIX}.${k}"
  kubeconfig "kubelet-${n}" "kubelet-${n}"
done
chmod 600 "${PKI}"/*.key
