package layout

// TunResourceName is the extended resource that gives a launcher pod
// TunDevice. virt-handler's device plugin advertises it on every node and
// virt-controller requests one for the compute container. The kubelet then
// passes the device to the runtime in the CRI request, and the runtime
// (containerd with device_ownership_from_security_context) makes the
// container's node the launcher user's: libvirt, unprivileged, opens it to
// attach the guest's NIC to the tap virt-handler made in the pod's network
// namespace. The host's node is root's, mode 0600, so a hostPath mount of
// it would not do.
const TunResourceName = "devices.kubevirt.io/tun"

// TunDevice is the tun/tap clone device, at the same path on the node and
// in the launcher container.
const TunDevice = "/dev/net/tun"
