package vmistatus

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode/utf8"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Dropped is what the node left out of a guest's report, or cut, because it
// broke the API's bounds (virtv1.MaxStatusInterfaces and the others). The
// guest agent, and the launcher that relays it, are the tenant's: whatever
// they say is cut to fit before it reaches the status, so that virt-apiserver,
// whose validation enforces the same bounds, never refuses a status write of
// the node, and the VMI's phase and conditions keep being written.
type Dropped struct {
	// Addresses that are not IP addresses (net/netip), or are longer than
	// virtv1.MaxIPAddressLength.
	Addresses int
	// MACs that are not hardware addresses (net.ParseMAC).
	MACs int
	// ExtraAddresses beyond virtv1.MaxInterfaceIPAddresses of an interface.
	ExtraAddresses int
	// ExtraInterfaces beyond virtv1.MaxStatusInterfaces.
	ExtraInterfaces int
	// Cut strings: longer than their bound, or not UTF-8.
	Cut int
	// Examples are the first few values dropped as unparsable, quoted and
	// cut short, for the event.
	Examples []string
}

// maxExamples is how many dropped values an event quotes; exampleLength how
// many bytes of each.
const (
	maxExamples   = 3
	exampleLength = 64
)

// Empty reports whether nothing was dropped or cut.
func (d *Dropped) Empty() bool {
	return d.Addresses == 0 && d.MACs == 0 && d.ExtraAddresses == 0 && d.ExtraInterfaces == 0 && d.Cut == 0
}

// String says what was dropped, for an event: counts and bounds only, and the
// few quoted examples, so a message stays short whatever the guest sent.
func (d *Dropped) String() string {
	var parts []string
	if d.Addresses > 0 {
		parts = append(parts, fmt.Sprintf("%d addresses that are not IP addresses of at most %d characters", d.Addresses, virtv1.MaxIPAddressLength))
	}
	if d.MACs > 0 {
		parts = append(parts, fmt.Sprintf("%d MAC addresses that are not hardware addresses", d.MACs))
	}
	if d.ExtraAddresses > 0 {
		parts = append(parts, fmt.Sprintf("%d addresses beyond %d per interface", d.ExtraAddresses, virtv1.MaxInterfaceIPAddresses))
	}
	if d.ExtraInterfaces > 0 {
		parts = append(parts, fmt.Sprintf("%d interfaces beyond %d", d.ExtraInterfaces, virtv1.MaxStatusInterfaces))
	}
	msg := "dropped " + strings.Join(parts, ", ")
	if len(parts) == 0 {
		msg = ""
	}
	if d.Cut > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += fmt.Sprintf("cut %d strings to their bounds (%d bytes, UTF-8)", d.Cut, virtv1.MaxGuestStringLength)
	}
	if len(d.Examples) > 0 {
		msg += "; such as " + strings.Join(d.Examples, ", ")
	}
	return msg
}

func (d *Dropped) example(v string) {
	if len(d.Examples) == maxExamples {
		return
	}
	q := fmt.Sprintf("%q", truncate(v, exampleLength))
	for _, e := range d.Examples {
		if e == q {
			return
		}
	}
	d.Examples = append(d.Examples, q)
}

// validAddress reports whether a is an address the status may hold.
func validAddress(a string) bool {
	if len(a) > virtv1.MaxIPAddressLength {
		return false
	}
	_, err := netip.ParseAddr(a)
	return err == nil
}

// boundAddresses are the valid addresses of all, at most
// virtv1.MaxInterfaceIPAddresses, in their order.
func boundAddresses(all []string, d *Dropped) []string {
	var out []string
	for _, a := range all {
		switch {
		case !validAddress(a):
			d.Addresses++
			d.example(a)
		case len(out) == virtv1.MaxInterfaceIPAddresses:
			d.ExtraAddresses++
		default:
			out = append(out, a)
		}
	}
	return out
}

// boundMAC is mac if it is a hardware address, else "".
func boundMAC(mac string, d *Dropped) string {
	if mac == "" {
		return ""
	}
	if _, err := net.ParseMAC(mac); err != nil {
		d.MACs++
		d.example(mac)
		return ""
	}
	return mac
}

// boundString is s as valid UTF-8 of at most n bytes.
func boundString(s string, n int, d *Dropped) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	d.Cut++
	return truncate(strings.ToValidUTF8(s, "\uFFFD"), n)
}

// truncate cuts valid UTF-8 s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// bound cuts a status the node is about to write to the API's bounds: its
// interfaces, guestOSInfo and conditions, whatever their source (the guest's
// report, the launcher, an earlier status). Guest reports are already
// filtered where they are read (mergeGuestInterfaces, guestOSInfo), which
// keeps the interface's primary address a valid one; this is the last
// guard, so that no value reaches the API that its validation refuses.
func bound(s *virtv1.VirtualMachineInstanceStatus, d *Dropped) {
	if n := len(s.Interfaces); n > virtv1.MaxStatusInterfaces {
		d.ExtraInterfaces += n - virtv1.MaxStatusInterfaces
		s.Interfaces = s.Interfaces[:virtv1.MaxStatusInterfaces]
	}
	for i := range s.Interfaces {
		iface := &s.Interfaces[i]
		if iface.IPAddress != "" && !validAddress(iface.IPAddress) {
			d.Addresses++
			d.example(iface.IPAddress)
			iface.IPAddress = ""
		}
		iface.IPAddresses = boundAddresses(iface.IPAddresses, d)
		iface.MAC = boundMAC(iface.MAC, d)
		iface.InterfaceName = boundString(iface.InterfaceName, virtv1.MaxGuestStringLength, d)
	}
	os := &s.GuestOSInfo
	for _, f := range []*string{&os.Name, &os.KernelRelease, &os.Version, &os.PrettyName, &os.VersionID, &os.KernelVersion, &os.Machine, &os.ID} {
		*f = boundString(*f, virtv1.MaxGuestStringLength, d)
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Reason = boundString(c.Reason, virtv1.MaxConditionReasonLength, d)
		c.Message = boundString(c.Message, virtv1.MaxConditionMessageLength, d)
	}
}
