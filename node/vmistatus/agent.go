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
func setAgent(s *virtv1.VirtualMachineInstanceStatus, d *apiv1.Domain, now metav1.Time, dropped *Dropped) {
	if d.GetAgentConnected() {
		s.SetCondition(condition(virtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", ""), now)
	} else {
		s.RemoveCondition(virtv1.VirtualMachineInstanceAgentConnected)
	}
	if os := guestOSInfo(d.GetGuestOsInfo(), dropped); os != (virtv1.VirtualMachineInstanceGuestOSInfo{}) {
		s.GuestOSInfo = os
	}
}

// guestOSInfo is the agent's OS report, each string cut to
// virtv1.MaxGuestStringLength.
func guestOSInfo(os *apiv1.GuestOSInfo, d *Dropped) virtv1.VirtualMachineInstanceGuestOSInfo {
	b := func(s string) string { return boundString(s, virtv1.MaxGuestStringLength, d) }
	return virtv1.VirtualMachineInstanceGuestOSInfo{
		Name: b(os.GetName()), KernelRelease: b(os.GetKernelRelease()), Version: b(os.GetVersion()), PrettyName: b(os.GetPrettyName()),
		VersionID: b(os.GetVersionId()), KernelVersion: b(os.GetKernelVersion()), Machine: b(os.GetMachine()), ID: b(os.GetId()),
	}
}

// maxGuestInterfacesRead bounds how many of the guest's interfaces are
// looked at, so that a report of thousands costs no more than this: a
// guest's real NICs come first in its list (the agent lists by index).
const maxGuestInterfacesRead = 4 * virtv1.MaxStatusInterfaces

// mergeGuestInterfaces adds what the guest agent reports to the interfaces
// of the spec, as KubeVirt does: a guest interface is matched by MAC
// address; the match gets the guest's name for it (interfaceName),
// "guest-agent" in its infoSource and, unless masquerade puts the guest
// behind NAT, the guest's addresses. A masqueraded interface keeps the
// pod's addresses: the guest's own is private to the pod, clients use the
// pod IP. Guest interfaces no spec interface has (a bridge or container
// network inside the guest) follow, without a name, infoSource
// "guest-agent", as long as the status has room (virtv1.MaxStatusInterfaces).
// What the guest says is cut to the API's bounds on the way (Dropped).
func mergeGuestInterfaces(out []virtv1.VirtualMachineInstanceNetworkInterface, vmi *virtv1.VirtualMachineInstance, guest []*apiv1.GuestInterface, dropped *Dropped) []virtv1.VirtualMachineInstanceNetworkInterface {
	if len(guest) > maxGuestInterfacesRead {
		dropped.ExtraInterfaces += len(guest) - maxGuestInterfacesRead
		guest = guest[:maxGuestInterfacesRead]
	}
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
			iface.InterfaceName = boundString(gi.GetName(), virtv1.MaxGuestStringLength, dropped)
			iface.InfoSource = addInfoSource(iface.InfoSource, InfoSourceGuestAgent)
			if !masquerade[iface.Name] {
				iface.IPAddress, iface.IPAddresses = addresses(gi.GetIpAddresses(), dropped)
			}
			break
		}
	}
	for g, gi := range guest {
		if matched[g] {
			continue
		}
		if len(out) == virtv1.MaxStatusInterfaces {
			dropped.ExtraInterfaces++
			continue
		}
		iface := virtv1.VirtualMachineInstanceNetworkInterface{
			MAC: boundMAC(gi.GetMac(), dropped), InterfaceName: boundString(gi.GetName(), virtv1.MaxGuestStringLength, dropped),
			InfoSource: InfoSourceGuestAgent,
		}
		iface.IPAddress, iface.IPAddresses = addresses(gi.GetIpAddresses(), dropped)
		out = append(out, iface)
	}
	return out
}

// addresses are an interface's primary address (the first IPv4 one, else
// the first; KubeVirt's choice) and all of them, of those that are IP
// addresses, at most virtv1.MaxInterfaceIPAddresses.
func addresses(reported []string, dropped *Dropped) (string, []string) {
	all := boundAddresses(reported, dropped)
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
