package guestagent

import (
	"strings"
	"unicode/utf8"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// The guest's report is cut on its way into the contract: a string to the
// API's bound of what a guest may say (virtv1.MaxGuestStringLength, an
// address to virtv1.MaxIPAddressLength) and to valid UTF-8, which protobuf
// requires of a string (a report that is not would make every answer of
// the launcher fail to marshal); the lists to twice what the status holds,
// so that the node, which checks and cuts again, has valid ones to choose
// from and a report stays far below gRPC's 4 MiB message limit (~1 MiB at
// most).
const (
	MaxReportedInterfaces = 2 * virtv1.MaxStatusInterfaces
	MaxReportedAddresses  = 2 * virtv1.MaxInterfaceIPAddresses
)

// cut is the agent's answer as the contract carries it.
func cut(info hypervisor.GuestInfo) (*apiv1.GuestOSInfo, string, []*apiv1.GuestInterface) {
	return guestOSInfo(info.OS), bounded(info.Hostname, virtv1.MaxGuestStringLength), guestInterfaces(info.Interfaces)
}

func guestOSInfo(os hypervisor.GuestOS) *apiv1.GuestOSInfo {
	b := func(s string) string { return bounded(s, virtv1.MaxGuestStringLength) }
	return &apiv1.GuestOSInfo{
		Name: b(os.Name), KernelRelease: b(os.KernelRelease), Version: b(os.Version), PrettyName: b(os.PrettyName),
		VersionId: b(os.VersionID), KernelVersion: b(os.KernelVersion), Machine: b(os.Machine), Id: b(os.ID),
	}
}

func guestInterfaces(in []hypervisor.GuestInterface) []*apiv1.GuestInterface {
	var out []*apiv1.GuestInterface
	for _, i := range in[:min(len(in), MaxReportedInterfaces)] {
		gi := &apiv1.GuestInterface{Name: bounded(i.Name, virtv1.MaxGuestStringLength), Mac: bounded(i.MAC, virtv1.MaxGuestStringLength)}
		for _, a := range i.Addresses[:min(len(i.Addresses), MaxReportedAddresses)] {
			gi.IpAddresses = append(gi.IpAddresses, bounded(a, virtv1.MaxIPAddressLength))
		}
		out = append(out, gi)
	}
	return out
}

// bounded is s as valid UTF-8 of at most n bytes, cut at a character.
func bounded(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
