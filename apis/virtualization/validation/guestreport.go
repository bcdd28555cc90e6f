package validation

import (
	"fmt"
	"net"
	"net/netip"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// validateGuestReport holds status.interfaces and status.guestOSInfo, which
// virt-handler fills from the guest agent's report, to the bounds of
// apis/virtualization/v1 (MaxStatusInterfaces and the others): the node
// cuts a report to the same constants before it writes, so a status beyond
// them comes from somewhere else and is refused. The checks ratchet: a
// part of the status that the write leaves as it was is not checked
// again, so that a status stored before a bound existed does not block the
// writes of its phase and conditions.
func validateGuestReport(s, old *virtualization.VirtualMachineInstanceStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !equality.Semantic.DeepEqual(s.Interfaces, old.Interfaces) {
		allErrs = append(allErrs, validateStatusInterfaces(s.Interfaces, fldPath.Child("interfaces"))...)
	}
	if s.GuestOSInfo != old.GuestOSInfo {
		p := fldPath.Child("guestOSInfo")
		os := s.GuestOSInfo
		for _, f := range []struct{ name, value string }{
			{"name", os.Name}, {"kernelRelease", os.KernelRelease}, {"version", os.Version}, {"prettyName", os.PrettyName},
			{"versionId", os.VersionID}, {"kernelVersion", os.KernelVersion}, {"machine", os.Machine}, {"id", os.ID},
		} {
			allErrs = append(allErrs, validateGuestString(f.value, virtv1.MaxGuestStringLength, p.Child(f.name))...)
		}
	}
	return allErrs
}

func validateStatusInterfaces(ifaces []virtualization.VirtualMachineInstanceNetworkInterface, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(ifaces) > virtv1.MaxStatusInterfaces {
		// The items are not looked at: the count alone refuses the write.
		return field.ErrorList{field.TooMany(fldPath, len(ifaces), virtv1.MaxStatusInterfaces)}
	}
	for i, iface := range ifaces {
		p := fldPath.Index(i)
		if iface.IPAddress != "" {
			allErrs = append(allErrs, validateStatusAddress(iface.IPAddress, p.Child("ipAddress"))...)
		}
		if len(iface.IPAddresses) > virtv1.MaxInterfaceIPAddresses {
			allErrs = append(allErrs, field.TooMany(p.Child("ipAddresses"), len(iface.IPAddresses), virtv1.MaxInterfaceIPAddresses))
		} else {
			for j, ip := range iface.IPAddresses {
				allErrs = append(allErrs, validateStatusAddress(ip, p.Child("ipAddresses").Index(j))...)
			}
		}
		if iface.MAC != "" {
			if _, err := net.ParseMAC(iface.MAC); err != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("mac"), short(iface.MAC), "must be a MAC address"))
			}
		}
		allErrs = append(allErrs, validateGuestString(iface.InterfaceName, virtv1.MaxGuestStringLength, p.Child("interfaceName"))...)
	}
	return allErrs
}

func validateStatusAddress(a string, fldPath *field.Path) field.ErrorList {
	if len(a) > virtv1.MaxIPAddressLength {
		return field.ErrorList{field.TooLong(fldPath, "", virtv1.MaxIPAddressLength)}
	}
	if _, err := netip.ParseAddr(a); err != nil {
		return field.ErrorList{field.Invalid(fldPath, a, "must be an IP address")}
	}
	return nil
}

// validateGuestString refuses a string longer than max bytes, or not UTF-8
// (which JSON would not carry unchanged).
func validateGuestString(s string, max int, fldPath *field.Path) field.ErrorList {
	if len(s) > max {
		return field.ErrorList{field.TooLong(fldPath, "", max)}
	}
	if !utf8.ValidString(s) {
		return field.ErrorList{field.Invalid(fldPath, short(s), "must be UTF-8")}
	}
	return nil
}

// short is a value quoted in an error, cut so that the answer stays small
// whatever was sent.
func short(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%.64q...", s)
}

// validateConditionText bounds a condition's reason and message as
// metav1.Condition does. An unchanged condition (same type, reason and
// message as before the write) is not checked again.
func validateConditionText(c virtualization.VirtualMachineInstanceCondition, old []virtualization.VirtualMachineInstanceCondition, fldPath *field.Path) field.ErrorList {
	for _, o := range old {
		if o.Type == c.Type && o.Reason == c.Reason && o.Message == c.Message {
			return nil
		}
	}
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateGuestString(c.Reason, virtv1.MaxConditionReasonLength, fldPath.Child("reason"))...)
	allErrs = append(allErrs, validateGuestString(c.Message, virtv1.MaxConditionMessageLength, fldPath.Child("message"))...)
	return allErrs
}
