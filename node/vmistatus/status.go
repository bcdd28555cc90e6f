package vmistatus

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network"
)

// Reasons of conditions the node sets besides the well-known phase reasons.
const (
	// ReasonPaused: Ready=False and Paused=True while the vCPUs are paused.
	ReasonPaused = "Paused"
	// ReasonSuspended: Ready=False while the guest is suspended to RAM.
	ReasonSuspended = "Suspended"
	// ReasonNotRunning: Ready=False for a domain that is not running yet.
	ReasonNotRunning = "NotRunning"
	// ReasonReadinessProbeFailed: Ready=False for a running guest that
	// does not pass its readiness probe (yet).
	ReasonReadinessProbeFailed = "ReadinessProbeFailed"
)

// Sources of status.interfaces[].infoSource (KubeVirt's words, and "dhcp"
// for the lease the launcher's DHCP server handed the guest).
const (
	InfoSourceDomain     = "domain"
	InfoSourceDHCP       = "dhcp"
	InfoSourceGuestAgent = "guest-agent"
)

// Running is vmi's status for a live (started, not ended) domain d of the
// launcher pod; info, when known, says why hardware virtualisation is not
// used. What the guest and the launcher said is cut to the API's bounds
// (bound); Dropped says what did not fit, for an event.
func Running(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod, d *apiv1.Domain, info *apiv1.InfoResponse, now metav1.Time) (*virtv1.VirtualMachineInstanceStatus, Dropped) {
	var dropped Dropped
	s := vmi.Status.DeepCopy()
	s.SetPhase(virtv1.Running, "", now)

	switch d.GetState() {
	case apiv1.DomainState_DOMAIN_STATE_RUNNING, apiv1.DomainState_DOMAIN_STATE_BLOCKED, apiv1.DomainState_DOMAIN_STATE_SHUTTING_DOWN:
		if vmi.Spec.ReadinessProbe != nil && (pod == nil || !vmipod.ComputeReady(pod)) {
			// The probe is the compute container's readiness probe
			// (launcherpod.guestProbe): the kubelet runs it, and the
			// pod's readiness, which Services follow, says.
			s.SetCondition(condition(virtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, ReasonReadinessProbeFailed,
				"The guest does not pass its readiness probe (the launcher pod's events say why)"), now)
		} else {
			s.SetCondition(condition(virtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, "", ""), now)
		}
		s.RemoveCondition(virtv1.VirtualMachineInstancePaused)
	case apiv1.DomainState_DOMAIN_STATE_PAUSED:
		if switchover(d) {
			// The guest is on its way to the target: no one paused
			// it, and the pause ends with the move (KubeVirt's
			// handler leaves the conditions alone too). A write
			// here would also take CPU from the switchover itself.
			break
		}
		msg := "The guest's vCPUs are paused"
		if d.GetReason() != "" {
			msg += " (libvirt: " + d.GetReason() + ")"
		}
		s.SetCondition(condition(virtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, ReasonPaused, msg), now)
		s.SetCondition(condition(virtv1.VirtualMachineInstancePaused, corev1.ConditionTrue, ReasonPaused, msg), now)
	case apiv1.DomainState_DOMAIN_STATE_PMSUSPENDED:
		s.SetCondition(condition(virtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, ReasonSuspended, "The guest is suspended"), now)
		s.RemoveCondition(virtv1.VirtualMachineInstancePaused)
	default:
		s.SetCondition(condition(virtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, ReasonNotRunning,
			fmt.Sprintf("The domain is %s", strings.TrimPrefix(d.GetState().String(), "DOMAIN_STATE_"))), now)
		s.RemoveCondition(virtv1.VirtualMachineInstancePaused)
	}

	if d.GetSoftwareEmulation() {
		s.SetCondition(condition(virtv1.VirtualMachineInstanceSoftwareEmulation, corev1.ConditionTrue,
			virtv1.ReasonSoftwareEmulation, softwareEmulationMessage(info)), now)
	} else {
		s.RemoveCondition(virtv1.VirtualMachineInstanceSoftwareEmulation)
	}
	setAgent(s, d, now, &dropped)
	s.Interfaces = interfaces(vmi, pod, d, &dropped)
	bound(s, &dropped)
	return s, dropped
}

// switchover reports whether d is paused by its own live migration's
// switch-over: QEMU stops the vCPUs for the last copy of memory and the
// devices (libvirt's reason "migration"), or the guest already runs on the
// target in post-copy ("postcopy"), while the launcher's live (PreCopy or
// PostCopy) migration job runs. A copy made with the guest paused
// throughout (mode Paused: seconds, not a switch-over) and a pause left
// behind by a migration that ended are pauses like any other.
func switchover(d *apiv1.Domain) bool {
	m := d.GetMigration()
	if d.GetState() != apiv1.DomainState_DOMAIN_STATE_PAUSED || m.GetState() != apiv1.MigrationState_MIGRATION_STATE_RUNNING {
		return false
	}
	if mode := virtv1.MigrationMode(m.GetMode()); mode != virtv1.MigrationPreCopy && mode != virtv1.MigrationPostCopy {
		return false
	}
	return d.GetReason() == "migration" || d.GetReason() == "postcopy"
}

func condition(t virtv1.VirtualMachineInstanceConditionType, st corev1.ConditionStatus, reason, message string) virtv1.VirtualMachineInstanceCondition {
	return virtv1.VirtualMachineInstanceCondition{Type: t, Status: st, Reason: reason, Message: message}
}

func softwareEmulationMessage(info *apiv1.InfoResponse) string {
	msg := "The guest runs under software emulation (QEMU TCG) because the node has no usable hardware virtualisation"
	if why := info.GetHardwareVirtualization().GetReason(); why != "" {
		msg += ": " + why
	}
	return msg
}

// Ended is vmi's status once its guest ended as end says. The interfaces,
// SoftwareEmulation and guestOSInfo stay as they were: they describe the
// guest that ran. Its agent is gone with it. The message, which may quote
// the launcher, is cut to the API's bounds.
func Ended(vmi *virtv1.VirtualMachineInstance, end End, now metav1.Time) *virtv1.VirtualMachineInstanceStatus {
	s := vmi.Status.DeepCopy()
	s.End(end.Phase, end.Reason, end.Message, now)
	s.RemoveCondition(virtv1.VirtualMachineInstanceAgentConnected)
	bound(s, &Dropped{})
	return s
}

// interfaces are the guest's interfaces: each of the spec with the MAC the
// launcher reports (or the spec's) and, for pod-network interfaces, the pod
// interface it is bound to and the pod's addresses: what clients use, the
// guest's own under the bridge binding, forwarded to the guest under
// masquerade. InfoSource says "dhcp" too once the guest took its lease. The
// guest agent's report is merged in last (mergeGuestInterfaces).
func interfaces(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod, d *apiv1.Domain, dropped *Dropped) []virtv1.VirtualMachineInstanceNetworkInterface {
	reported := map[string]*apiv1.Interface{}
	for _, i := range d.GetInterfaces() {
		reported[i.GetName()] = i
	}
	podNetworks := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		podNetworks[n.Name] = n.Pod != nil
	}
	var ips []string
	if pod != nil {
		for _, ip := range pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		if len(ips) == 0 && pod.Status.PodIP != "" {
			ips = []string{pod.Status.PodIP}
		}
	}
	var out []virtv1.VirtualMachineInstanceNetworkInterface
	for _, spec := range vmi.Spec.Domain.Devices.Interfaces {
		r := reported[spec.Name]
		iface := virtv1.VirtualMachineInstanceNetworkInterface{Name: spec.Name, MAC: boundMAC(r.GetMac(), dropped)}
		if iface.MAC == "" {
			iface.MAC = spec.MacAddress
		}
		if r != nil {
			iface.InfoSource = InfoSourceDomain
			if r.GetDhcpAddress() != "" {
				iface.InfoSource += ", " + InfoSourceDHCP
			}
		}
		if podNetworks[spec.Name] {
			iface.PodInterfaceName = network.PodInterface
			if len(ips) > 0 {
				iface.IPAddress = ips[0]
				iface.IPAddresses = ips
			}
		}
		out = append(out, iface)
	}
	return mergeGuestInterfaces(out, vmi, d.GetGuestInterfaces(), dropped)
}
