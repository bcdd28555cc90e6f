package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// validateProbes checks the readiness and liveness probes. An HTTP or TCP
// probe becomes a probe of the launcher pod's compute container, which the
// kubelet runs against the pod's address (forwarded to the guest under
// masquerade, the guest's own under bridge): each is refused here for what
// the pod's validation would refuse later, when the VMI is already stored.
func validateProbes(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	ports := map[string]bool{}
	for _, iface := range spec.Domain.Devices.Interfaces {
		for _, p := range iface.Ports {
			if p.Name != "" && (p.Protocol == "" || p.Protocol == "TCP") {
				ports[p.Name] = true
			}
		}
	}
	if p := spec.ReadinessProbe; p != nil {
		errs = append(errs, validateProbe(p, ports, false, fldPath.Child("readinessProbe"))...)
	}
	if p := spec.LivenessProbe; p != nil {
		errs = append(errs, validateProbe(p, ports, true, fldPath.Child("livenessProbe"))...)
	}
	return errs
}

func validateProbe(p *virtualization.Probe, ports map[string]bool, liveness bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if h := p.HTTPGet; h != nil {
		n++
		hp := fldPath.Child("httpGet")
		errs = append(errs, validateProbePort(h.Port, ports, hp.Child("port"))...)
		if h.Scheme != "" && h.Scheme != "HTTP" && h.Scheme != "HTTPS" {
			errs = append(errs, field.NotSupported(hp.Child("scheme"), h.Scheme, []string{"HTTP", "HTTPS"}))
		}
		if h.Host != "" {
			// The kubelet would probe that host, not the guest.
			errs = append(errs, field.Forbidden(hp.Child("host"), "the probe goes to the guest at the launcher pod's address; a host would take it elsewhere"))
		}
		for i, hdr := range h.HTTPHeaders {
			if !validHeaderName(hdr.Name) {
				errs = append(errs, field.Invalid(hp.Child("httpHeaders").Index(i).Child("name"), hdr.Name, "must be an HTTP header name"))
			}
		}
	}
	if t := p.TCPSocket; t != nil {
		n++
		tp := fldPath.Child("tcpSocket")
		errs = append(errs, validateProbePort(t.Port, ports, tp.Child("port"))...)
		if t.Host != "" {
			errs = append(errs, field.Forbidden(tp.Child("host"), "the probe goes to the guest at the launcher pod's address; a host would take it elsewhere"))
		}
	}
	if p.Exec != nil {
		n++
		if len(p.Exec.Command) == 0 {
			errs = append(errs, field.Required(fldPath.Child("exec", "command"), "the command the guest agent runs in the guest"))
		}
	}
	if p.GuestAgentPing != nil {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(fldPath, "one of httpGet, tcpSocket, exec or guestAgentPing"))
	case n > 1:
		errs = append(errs, field.Forbidden(fldPath, "only one of httpGet, tcpSocket, exec or guestAgentPing may be set"))
	}
	for _, f := range []struct {
		name string
		v    int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold},
	} {
		if f.v < 0 {
			errs = append(errs, field.Invalid(fldPath.Child(f.name), f.v, "must be 0 or more (0 takes the default)"))
		}
	}
	if liveness && p.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(fldPath.Child("successThreshold"), p.SuccessThreshold, "must be 1 for a liveness probe, as for a container's"))
	}
	return errs
}

// validateProbePort accepts a port number or the name of a TCP port of one
// of the VMI's interfaces (the pod's compute container gets those ports).
func validateProbePort(port intstr.IntOrString, ports map[string]bool, fldPath *field.Path) field.ErrorList {
	if port.Type == intstr.Int {
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			return field.ErrorList{field.Invalid(fldPath, port.IntValue(), msg)}
		}
		return nil
	}
	if !ports[port.StrVal] {
		return field.ErrorList{field.Invalid(fldPath, port.StrVal, "must be a port number or the name of a TCP port in an interface's ports")}
	}
	return nil
}

// validHeaderName reports whether s is an HTTP header name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r < 0x80 && strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}
