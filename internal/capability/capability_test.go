package capability

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		facts Facts
		want  map[string]string
	}{
		{"TCG, QEMU 7.2", Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"},
			map[string]string{Prefix + "capability-kvm": "false", Prefix + "capability-nic-igb": "false",
				LibvirtVersionLabel: "9.0.0", HypervisorVersionLabel: "7.2.22", DomainTypeLabel: "qemu"}},
		{"KVM, QEMU 8.2", Facts{LibvirtVersion: "10.0.0", HypervisorVersion: "8.2.0", DomainType: "kvm"},
			map[string]string{Prefix + "capability-kvm": "true", Prefix + "capability-nic-igb": "true",
				LibvirtVersionLabel: "10.0.0", HypervisorVersionLabel: "8.2.0", DomainTypeLabel: "kvm"}},
		{"a launcher's words are cleaned", Facts{HypervisorVersion: "8.0.0 (Debian 1:8.0+dfsg)", DomainType: "kvm/../x"},
			map[string]string{Prefix + "capability-kvm": "false", Prefix + "capability-nic-igb": "true",
				LibvirtVersionLabel: "", HypervisorVersionLabel: "8.0.0Debian18.0dfsg", DomainTypeLabel: "kvm..x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Labels(tc.facts)
			for k, v := range got {
				if errs := validation.IsQualifiedName(k); len(errs) > 0 {
					t.Errorf("label key %q: %v", k, errs)
				}
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("label %s=%q: %v", k, v, errs)
				}
				if !strings.HasPrefix(k, Prefix) {
					t.Errorf("label %s is outside %s, which virt-handler may not write", k, Prefix)
				}
				if tc.want[k] != v {
					t.Errorf("%s = %q, want %q", k, v, tc.want[k])
				}
			}
			if len(got) != len(tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
		})
	}
}

func igbVMI() *virtv1.VirtualMachineInstanceSpec {
	s := &virtv1.VirtualMachineInstanceSpec{}
	s.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "a", Model: "virtio"}, {Name: "b", Model: "igb"}}
	return s
}

func TestNeedsAndNodeSelector(t *testing.T) {
	plain := &virtv1.VirtualMachineInstanceSpec{}
	if n := Needs(plain, field.NewPath("spec")); len(n) != 0 {
		t.Errorf("a plain VMI needs %v", n)
	}
	if sel := NodeSelector(plain); len(sel) != 0 {
		t.Errorf("a plain VMI's selector %v", sel)
	}
	s := igbVMI()
	off := false
	s.Domain.Features = &virtv1.Features{HypervPassthrough: &virtv1.HyperVPassthrough{}}
	needs := Needs(s, field.NewPath("spec"))
	if len(needs) != 2 || needs[0].Name != "kvm" || needs[1].Name != "nic-igb" ||
		needs[1].Paths[0].String() != "spec.domain.devices.interfaces[1].model" {
		t.Fatalf("needs %v", needs)
	}
	if sel := NodeSelector(s); sel[Prefix+"capability-kvm"] != "true" || sel[Prefix+"capability-nic-igb"] != "true" || len(sel) != 2 {
		t.Errorf("selector %v", sel)
	}
	s.Domain.Features.HypervPassthrough.Enabled = &off
	if needs := Needs(s, field.NewPath("spec")); len(needs) != 1 {
		t.Errorf("disabled passthrough still needs kvm: %v", needs)
	}
}

func node(name string, ready bool, labels map[string]string) *corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
}

func TestCheck(t *testing.T) {
	tcg := Labels(Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"})
	newer := Labels(Facts{LibvirtVersion: "10.0.0", HypervisorVersion: "8.2.0", DomainType: "qemu"})
	p := field.NewPath("spec")
	for _, tc := range []struct {
		name  string
		nodes []*corev1.Node
		want  []string // substrings of the one error; none: accepted
	}{
		{"a Ready node reports it", []*corev1.Node{node("a", true, tcg), node("b", true, newer)}, nil},
		{"no node reports it", []*corev1.Node{node("b", true, tcg), node("a", true, nil)}, []string{
			"spec.domain.devices.interfaces[1].model", "nic-igb", "capability-nic-igb=true",
			"a has not reported it yet (its virt-handler has not probed it); b reports false (domain-type qemu, libvirt-version 9.0.0, hypervisor-version 7.2.22)"}},
		{"only a node that is not Ready", []*corev1.Node{node("b", false, newer)}, []string{"b reports true", "not Ready"}},
		{"no nodes", nil, []string{"there are no nodes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Check(igbVMI(), p, tc.nodes)
			if tc.want == nil {
				if len(errs) != 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden {
				t.Fatalf("errors %v, want one Forbidden", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs[0].Error(), w) {
					t.Errorf("%q lacks %q", errs[0].Error(), w)
				}
			}
		})
	}
	if errs := Check(&virtv1.VirtualMachineInstanceSpec{}, p, nil); len(errs) != 0 {
		t.Errorf("a plain VMI is refused without nodes: %v", errs)
	}
}
