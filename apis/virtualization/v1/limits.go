package v1

// Bounds of what a VMI's status holds from its guest. The guest (its agent)
// and the launcher pod (its tenant) choose these values, so virt-handler caps
// a report to them before it writes the status, and virt-apiserver's
// validation of status writes refuses anything beyond them: both sides read
// the same constants, so a status the node writes is never refused, and a
// guest that reports more than fits cannot make the VMI's status writes fail
// or grow. Together they keep what the node writes into a status below
// 1 MiB, inside etcd's 1.5 MiB request limit. An address must parse as an IP
// address (net/netip) and a MAC as a hardware address (net.ParseMAC, at most
// 59 characters); the node drops one that does not, with an event.
const (
	// MaxStatusInterfaces bounds status.interfaces: the spec's interfaces
	// (at most as many, KubeVirt's arrayLenMax of 256 for
	// spec.domain.devices.interfaces) come first, the guest's other
	// interfaces fill the rest.
	MaxStatusInterfaces = 256
	// MaxInterfaceIPAddresses bounds status.interfaces[].ipAddresses. A NIC
	// has an IPv4 address, an IPv6 link-local and a few global and privacy
	// addresses; 16 is far beyond what a guest uses.
	MaxInterfaceIPAddresses = 16
	// MaxIPAddressLength bounds an address of status.interfaces (ipAddress,
	// ipAddresses[]): the longest IPv6 text ("ffff:...:255.255.255.255", 45
	// characters) with a zone of an interface name (IFNAMSIZ).
	MaxIPAddressLength = 64
	// MaxGuestStringLength bounds, in bytes, every other string a guest
	// reports into the status: status.interfaces[].interfaceName and each
	// field of status.guestOSInfo. Linux interface names have 15
	// characters, Windows' friendly names up to 256; os-release fields are
	// short lines.
	MaxGuestStringLength = 256
	// MaxConditionReasonLength and MaxConditionMessageLength bound
	// status.conditions[].reason and message as metav1.Condition does; the
	// node builds messages from what its launcher says (libvirt's reasons,
	// errors), which the tenant of the pod controls.
	MaxConditionReasonLength  = 1024
	MaxConditionMessageLength = 32768
)
