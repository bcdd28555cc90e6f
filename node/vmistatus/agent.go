package vmistatus

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// setAgent writes what the launcher knows of the guest agent: the
// AgentConnected condition, True while it is connected and absent otherwise
// (KubeVirt's), and guestOSInfo from its report. The OS stays as last
// reported when the report has none (the agent not connected yet, or gone):
// what the guest runs does not change with its agent.
func setAgent(s *virtv1.VirtualMachineInstanceStatus, d *apiv1.Domain, now metav1.Time) {
	if d.GetAgentConnected() {
		s.SetCondition(condition(virtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", ""), now)
	} else {
		s.RemoveCondition(virtv1.VirtualMachineInstanceAgentConnected)
	}
	if os := guestOSInfo(d.GetGuestOsInfo()); os != (virtv1.VirtualMachineInstanceGuestOSInfo{}) {
		s.GuestOSInfo = os
	}
}

func guestOSInfo(os *apiv1.GuestOSInfo) virtv1.VirtualMachineInstanceGuestOSInfo {
	return virtv1.VirtualMachineInstanceGuestOSInfo{
		Name: os.GetName(), KernelRelease: os.GetKernelRelease(), Version: os.GetVersion(), PrettyName: os.GetPrettyName(),
		VersionID: os.GetVersionId(), KernelVersion: os.GetKernelVersion(), Machine: os.GetMachine(), ID: os.GetId(),
	}
}

// mergeGuestInterfaces adds what the guest agent reports to the interfaces
// of the spec, as KubeVirt does: a guest interface is matched by MAC
// address; the match gets the guest's name for it (interfaceName),
// "guest-agent" in its infoSource and, unless masquerade puts the guest
// behind NAT, the guest's addresses. A masqueraded interface keeps the
// pod's addresses: the guest's own is private to the pod, clients use the
// pod IP. Guest interfaces no spec interface has (a bridge or container
// network inside the guest) follow, without a name, infoSource
// "guest-agent".
func mergeGuestInterfaces(out []virtv1.VirtualMachineInstanceNetworkInterface, vmi *virtv1.VirtualMachineInstance, guest []*apiv1.GuestInterface) []virtv1.VirtualMachineInstanceNetworkInterface {
	masquerade := map[string]bool{}
	for _, i := range vmi.Spec.Domain.Devices.Interfaces {
		masquerade[i.Name] = i.Masquerade != nil
	}
	matched := make([]bool, len(guest))
	for o := range out {
		iface := &out[o]
		for g, gi := range guest {
			if matched[g] || iface.MAC == "" || !strings.EqualFold(gi.GetMac(), iface.MAC) {
				continue
			}
			matched[g] = true
			iface.InterfaceName = gi.GetName()
			iface.InfoSource = addInfoSource(iface.InfoSource, InfoSourceGuestAgent)
			if !masquerade[iface.Name] {
				iface.IPAddress, iface.IPAddresses = addresses(gi.GetIpAddresses())
			}
			break
		}
	}
	for g, gi := range guest {
		if matched[g] {
			continue
		}
		iface := virtv1.VirtualMachineInstanceNetworkInterface{
			MAC: gi.GetMac(), InterfaceName: gi.GetName(), InfoSource: InfoSourceGuestAgent,
		}
		iface.IPAddress, iface.IPAddresses = addresses(gi.GetIpAddresses())
		out = append(out, iface)
	}
	return out
}

// addresses are an interface's primary address (the first IPv4 one, else
// the first; KubeVirt's choice) and all of them.
func addresses(all []string) (string, []string) {
	if len(all) == 0 {
		return "", nil
	}
	for _, a := range all {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
			return a, all
		}
	}
	return all[0], all
}

func addInfoSource(sources, source string) string {
	if sources == "" {
		return source
	}
	return sources + ", " + source
}
