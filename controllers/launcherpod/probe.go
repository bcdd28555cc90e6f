package launcherpod

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// guestProbe is the probe of the compute container that checks the guest as
// p asks, or nil: KubeVirt's way. An exec or guestAgentPing check is an exec
// probe of the launcher's own command, which goes through the guest agent.
// An HTTP or TCP check is the kubelet's own,
// sent to the pod's address, which masquerade forwards to the guest and
// which the guest holds under bridge; so the pod's readiness (the Service
// endpoints) and the kubelet's kill on a liveness failure follow the guest.
// The kubelet runs neither before the startup probe passed, that is before
// the launcher serves (startupProbe). A named port is resolved against the VMI's
// interface ports (validation accepts only those), since the container
// declares none.
func guestProbe(vmi *virtv1.VirtualMachineInstance, p *virtv1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	out := &corev1.Probe{
		InitialDelaySeconds: p.InitialDelaySeconds,
		TimeoutSeconds:      p.TimeoutSeconds,
		PeriodSeconds:       p.PeriodSeconds,
		SuccessThreshold:    p.SuccessThreshold,
		FailureThreshold:    p.FailureThreshold,
	}
	switch {
	case p.HTTPGet != nil:
		h := p.HTTPGet.DeepCopy()
		h.Port = probePort(vmi, h.Port)
		out.HTTPGet = h
	case p.TCPSocket != nil:
		t := p.TCPSocket.DeepCopy()
		t.Port = probePort(vmi, t.Port)
		out.TCPSocket = t
	case p.Exec != nil || p.GuestAgentPing != nil:
		// Through the guest agent: the launcher's own command asks the
		// launcher (launcher/guestprobe), within the probe's timeout;
		// the kubelet's bound is a second longer, so the launcher's
		// answer, which says why, comes first.
		timeout := max(p.TimeoutSeconds, 1)
		cmd := []string{LauncherBinary, "--guest-probe", "ping", "--guest-probe-timeout", strconv.Itoa(int(timeout))}
		if p.Exec != nil {
			cmd[2] = "exec"
			cmd = append(append(cmd, "--"), p.Exec.Command...)
		}
		out.Exec = &corev1.ExecAction{Command: cmd}
		out.TimeoutSeconds = timeout + 1
	default:
		return nil
	}
	return out
}

// probePort is port as a number: a name is looked up among the TCP ports
// of the VMI's interfaces.
func probePort(vmi *virtv1.VirtualMachineInstance, port intstr.IntOrString) intstr.IntOrString {
	if port.Type == intstr.Int {
		return port
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		for _, p := range iface.Ports {
			if p.Name == port.StrVal && (p.Protocol == "" || p.Protocol == "TCP") {
				return intstr.FromInt32(p.Port)
			}
		}
	}
	return port
}

// startupProbe holds the VMI's probes back until the launcher is ready (its
// ready file), so that a liveness probe's failures count from there, as
// with KubeVirt's initialDelaySeconds; nil for a VMI without probes. The
// probe also bounds the launcher's start, which the launcher bounds itself
// (layout.StartupTimeout): it is no more than that because each try is an
// exec into the container, a container runtime process and its CPU, once
// a second until the launcher is ready: several per pod when a node starts
// many at once.
func startupProbe(vmi *virtv1.VirtualMachineInstance) *corev1.Probe {
	if vmi.Spec.ReadinessProbe == nil && vmi.Spec.LivenessProbe == nil {
		return nil
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{
			Exec: &corev1.ExecAction{Command: []string{"cat", layout.ReadyFile(layout.PrivateDir)}},
		},
		PeriodSeconds:    1,
		FailureThreshold: StartupTimeoutSeconds,
	}
}
