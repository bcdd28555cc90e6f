// Package termination writes a container's termination message: the text
// the kubelet copies into the pod's status, so `kubectl describe pod` shows
// why a launcher or a kernel-boot or container-disk container ended.
//
// It imports only the standard library: the static copy tool uses it too.
package termination
