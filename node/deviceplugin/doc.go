// Package deviceplugin is a kubelet device plugin (API v1beta1 of
// k8s.io/kubelet) that shares one device node of the host among the pods of
// its node: it advertises a fixed number of interchangeable devices of one
// extended resource, and a container that is allocated any of them gets
// that node, read-write, in the CRI request the kubelet sends to the
// runtime. virt-handler runs one for /dev/net/tun
// (launcher/layout.TunResourceName), as KubeVirt's virt-handler does: the
// runtime can then make the node the container user's own, which a hostPath
// mount of the host's root-only node cannot.
//
// A Plugin serves on a unix socket in the kubelet's device-plugin directory
// and registers with the kubelet there (kubelet.sock). The kubelet deletes
// every socket in that directory when it starts; the plugin notices its
// socket gone or kubelet.sock replaced, serves again and registers again.
// Its devices are healthy while the device node exists.
package deviceplugin
