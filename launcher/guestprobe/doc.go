// Package guestprobe runs a VMI's exec and guestAgentPing probes through the
// guest agent, KubeVirt's way: they become exec probes of the launcher
// pod's compute container that run `virt-launcher --guest-probe ...`
// (Probe, the client), which asks the launcher over a unix socket in its
// private directory (Serve) to send guest-ping, or guest-exec and then
// guest-exec-status until the command exited, to the guest agent through
// libvirt. The probe passes when the agent answers, or the command exits
// 0, within the probe's timeout.
//
// The socket is the launcher's, mode 0600 in its private socket directory:
// only processes of the launcher's user in the pod (the kubelet's exec
// probes, and whoever may exec into the pod) reach it. What a guest-exec
// runs is the VMI's own probe command; a caller who can exec into the pod
// can run commands in the guest this way, as KubeVirt's virt-probe can.
package guestprobe
