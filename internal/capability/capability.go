package capability

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Prefix starts every label of this package: virt-handler may write only
// labels under virtualization.kubevirt.io/ on its own Node
// (artifacts/virt-handler/node-restriction.yaml).
const Prefix = "virtualization.kubevirt.io/"

// The version labels: informative, what the capabilities were decided from.
const (
	LibvirtVersionLabel    = Prefix + "libvirt-version"
	HypervisorVersionLabel = Prefix + "hypervisor-version"
	DomainTypeLabel        = Prefix + "domain-type"
)

// Facts are what a node's hypervisor says of itself, as virt-handler's init
// container probed it with the launcher image (virt-launcher --probe-node:
// libvirt inside the image, QEMU beside it, on this node's CPU, with a
// launcher pod's device access).
type Facts struct {
	// LibvirtVersion and HypervisorVersion are like "9.0.0" and "7.2.22".
	LibvirtVersion, HypervisorVersion string
	// DomainType is "kvm" (hardware virtualisation) or "qemu" (TCG).
	DomainType string
}

// Capability is one row of the table.
type Capability struct {
	// Name is the capability's word in messages.
	Name string
	// Label is the Node label virt-handler sets to "true" or "false".
	Label string
	// Decided says in words how Has decides, for messages and docs.
	Decided string
	// Has decides the capability from a node's facts.
	Has func(Facts) bool
	// Needs are the fields of a VMI spec that need it.
	Needs func(*virtv1.VirtualMachineInstanceSpec, *field.Path) []*field.Path
}

// Table is every capability the platform tells nodes apart by.
var Table = []Capability{
	{
		Name:    "kvm",
		Label:   Prefix + "capability-kvm",
		Decided: "guests get hardware virtualisation (domain type kvm), not software emulation (QEMU TCG)",
		Has:     func(f Facts) bool { return f.DomainType == "kvm" },
		Needs: func(s *virtv1.VirtualMachineInstanceSpec, p *field.Path) []*field.Path {
			if f := s.Domain.Features; f != nil && f.HypervPassthrough != nil &&
				(f.HypervPassthrough.Enabled == nil || *f.HypervPassthrough.Enabled) {
				return []*field.Path{p.Child("domain", "features", "hypervPassthrough")}
			}
			return nil
		},
	},
	{
		Name:    "nic-igb",
		Label:   Prefix + "capability-nic-igb",
		Decided: "QEMU 8.0 or later, which added the igb NIC",
		Has:     func(f Facts) bool { return atLeast(f.HypervisorVersion, "8.0.0") },
		Needs: func(s *virtv1.VirtualMachineInstanceSpec, p *field.Path) []*field.Path {
			var paths []*field.Path
			for i, iface := range s.Domain.Devices.Interfaces {
				if iface.Model == "igb" {
					paths = append(paths, p.Child("domain", "devices", "interfaces").Index(i).Child("model"))
				}
			}
			return paths
		},
	},
}

func atLeast(v, min string) bool {
	have, err := version.ParseGeneric(v)
	return err == nil && have.AtLeast(version.MustParseGeneric(min))
}

// Labels are the labels a node with these facts carries: each capability's
// "true" or "false", and the versions they were decided from.
func Labels(f Facts) map[string]string {
	l := map[string]string{
		LibvirtVersionLabel:    labelValue(f.LibvirtVersion),
		HypervisorVersionLabel: labelValue(f.HypervisorVersion),
		DomainTypeLabel:        labelValue(f.DomainType),
	}
	for _, c := range Table {
		l[c.Label] = fmt.Sprint(c.Has(f))
	}
	return l
}

// labelValue keeps what a label value may hold (a version from a launcher
// is its own word, not trusted to be one).
func labelValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, ".-_")
}

// Need is a capability a VMI needs and the fields that need it.
type Need struct {
	Capability
	Paths []*field.Path
}

// Needs are the capabilities a VMI spec needs, in table order.
func Needs(spec *virtv1.VirtualMachineInstanceSpec, p *field.Path) []Need {
	var needs []Need
	for _, c := range Table {
		if paths := c.Needs(spec, p); len(paths) > 0 {
			needs = append(needs, Need{Capability: c, Paths: paths})
		}
	}
	return needs
}

// NodeSelector is the label selector a launcher pod needs so that it lands
// only on nodes that report the capabilities its VMI needs.
func NodeSelector(spec *virtv1.VirtualMachineInstanceSpec) map[string]string {
	sel := map[string]string{}
	for _, n := range Needs(spec, field.NewPath("spec")) {
		sel[n.Label] = "true"
	}
	return sel
}

// Check refuses the fields of a VMI spec that need a capability no Ready
// node among nodes reports; each error says what every node reports of it.
func Check(spec *virtv1.VirtualMachineInstanceSpec, p *field.Path, nodes []*corev1.Node) field.ErrorList {
	var errs field.ErrorList
	for _, n := range Needs(spec, p) {
		var reports []string
		found := false
		for _, node := range sortedNodes(nodes) {
			v, ok := node.Labels[n.Label]
			ready := isReady(node)
			found = found || ready && v == "true"
			reports = append(reports, report(node, v, ok, ready))
		}
		if found {
			continue
		}
		why := "there are no nodes"
		if len(reports) > maxReports {
			reports = append(reports[:maxReports], fmt.Sprintf("and %d more", len(reports)-maxReports))
		}
		if len(reports) > 0 {
			why = strings.Join(reports, "; ")
		}
		for _, path := range n.Paths {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf(
				"needs node capability %s (%s, Node label %s=true), which no Ready node reports: %s",
				n.Name, n.Decided, n.Label, why)))
		}
	}
	return errs
}

// maxReports bounds the nodes a refusal names.
const maxReports = 10

func report(node *corev1.Node, v string, ok, ready bool) string {
	var s string
	switch {
	case !ok:
		s = node.Name + " has not reported it yet (its virt-handler has not probed it)"
	default:
		s = node.Name + " reports " + v
		var from []string
		for _, l := range []string{DomainTypeLabel, LibvirtVersionLabel, HypervisorVersionLabel} {
			if x := node.Labels[l]; x != "" {
				from = append(from, strings.TrimPrefix(l, Prefix)+" "+x)
			}
		}
		if len(from) > 0 {
			s += " (" + strings.Join(from, ", ") + ")"
		}
	}
	if !ready {
		s += ", not Ready"
	}
	return s
}

func isReady(node *corev1.Node) bool {
	i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
	return i >= 0 && node.Status.Conditions[i].Status == corev1.ConditionTrue
}

func sortedNodes(nodes []*corev1.Node) []*corev1.Node {
	s := slices.Clone(nodes)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}
