# Configuration files of the local cluster's daemons, written under
# ${VIRT_STATE}/config. Sourced by up.sh after lib.sh. Each function returns
# 0 when it changed the file (so up.sh restarts that daemon) and 1 when the
# file was already current.

etcd_config() {
  write_file "${CONFIG_DIR}/etcd.yaml" <<EOF
name: virt-dev
data-dir: ${VIRT_STATE}/etcd
listen-client-urls: ${ETCD_CLIENT_URL}
advertise-client-urls: ${ETCD_CLIENT_URL}
listen-peer-urls: ${ETCD_PEER_URL}
initial-advertise-peer-urls: ${ETCD_PEER_URL}
initial-cluster: virt-dev=${ETCD_PEER_URL}
log-level: warn
EOF
}

# The kube-apiserver's admission configuration: the credentials it calls
# webhooks with, by the webhook's host (virt-apiserver's eviction webhook,
# which answers only that identity: docs/security.md).
admission_config() {
  write_file "${CONFIG_DIR}/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: ${KUBECONFIGS}/webhook-client.kubeconfig
EOF
}

containerd_config() {
  write_file "${CONFIG_DIR}/containerd.toml" <<EOF
version = 2
root = "${CONTAINERD_DIR}/root"
state = "${CONTAINERD_DIR}/state"
# opt would create /opt/containerd; the others are snapshotters and tracing
# this machine has no use for.
disabled_plugins = [
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

# containerd 1.6 answers a task's state with pid 0 when its shim does not
# answer within io.containerd.timeout.task.state (2 s by default), and the
# CRI plugin then points a new container's namespaces at /proc/0/ns/...: the
# container fails to start ("namespace path: lstat /proc/0/ns/ipc", containerd
# issue 9160). Sixty test guests booting at once on 2 cores starve the shims
# that long; a slow answer is better than a wrong one.
[timeouts]
  "io.containerd.timeout.task.state" = "30s"

[grpc]
  address = "${CONTAINERD_SOCK}"

[ttrpc]
  address = "${CONTAINERD_SOCK}.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:dev"
  stream_server_address = "127.0.0.1"
  # This machine lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj
  # below 0, so clamp the kubelet's negative values instead of failing.
  restrict_oom_score_adj = true
  # Keep pod network namespaces away from /run/netns, where any bind mount
  # made by 'ip netns' would make them impossible to remove.
  netns_mounts_under_state_dir = true
  enable_selinux = false
  # Device nodes from device plugins (virt-handler's /dev/net/tun) belong
  # in the container to its runAsUser/runAsGroup instead of root: the
  # launcher (uid 107, no capabilities) must open /dev/net/tun, which the
  # host keeps root's, mode 0600.
  device_ownership_from_security_context = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # No systemd on these machines: the kubelet uses cgroupfs too.
        SystemdCgroup = false
        Root = "${CONTAINERD_DIR}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${CONFIG_DIR}/cni"
    max_conf_num = 1
EOF
}

# The pod network: a bridge whose host side is the gateway, host-local
# addresses from POD_CIDR, and routes to the pods of every node
# (NODES_CIDR) and the service range only, so that pods reach nothing
# beyond this machine's 198.18.0.0/15.
cni_config() {
  write_file "${CONFIG_DIR}/cni/10-virt-dev.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "${CNI_NETWORK}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${VIRT_STATE}/cni/ipam",
        "ranges": [[{"subnet": "${POD_CIDR}", "gateway": "${POD_GATEWAY}"}]],
        "routes": [{"dst": "${NODES_CIDR}"}, {"dst": "${SERVICE_CIDR}"}]
      }
    }
  ]
}
EOF
}

kubelet_config() {
  {
    cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI}/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
# No systemd, and cgroup v1: the kubelet 1.37 refuses v1 unless told.
cgroupDriver: cgroupfs
failCgroupV1: false
# Leave the host's iptables alone (KUBE-FIREWALL would drop 127/8 traffic).
makeIPTablesUtilChains: false
# Images come from tarballs and cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# A shared build machine's disk is often fuller than the defaults allow.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
# Pods resolve through the cluster DNS (dns.sh, Service kube-dns), which
# answers for cluster.local only. The host's resolv.conf is never handed
# on (not even to dnsPolicy Default pods, which get an empty one): its
# nameserver is outside the ranges pods may talk to.
clusterDNS: [198.19.0.10]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: ${VIRT_STATE}/pod-logs
serializeImagePulls: false
failSwapOn: false
EOF
    # The extra nodes' own settings (node.sh).
    if [ -n "${KUBELET_EXTRA}" ]; then echo "${KUBELET_EXTRA}"; fi
  } | write_file "${CONFIG_DIR}/kubelet.yaml"
}

kube_proxy_config() {
  write_file "${CONFIG_DIR}/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${KUBECONFIGS}/kube-proxy.kubeconfig
hostnameOverride: ${NODE_NAME}
mode: iptables
clusterCIDR: ${POD_CIDR}
detectLocalMode: ClusterCIDR
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts only on the bridge address, never on the machine's own network.
nodePortAddresses: ["${NODE_IP}/32"]
iptables:
  # Pod -> service -> pod on the same bridge needs the reply to come back
  # through the host; masquerading all service traffic guarantees that.
  masqueradeAll: true
  # Would set net.ipv4.conf.all.route_localnet.
  localhostNodePorts: false
  minSyncPeriod: 1s
  syncPeriod: 30s
# Zero: leave the host's conntrack table size and timeouts as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}
