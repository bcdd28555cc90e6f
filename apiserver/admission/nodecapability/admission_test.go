package nodecapability

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/internal/capability"
)

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func attrs(vmi *virtualization.VirtualMachineInstance, subresource string) admission.Attributes {
	return admission.NewAttributesRecord(vmi, nil, virtualization.Kind("VirtualMachineInstance").WithVersion("v1"),
		"ns", vmi.Name, virtualization.Resource("virtualmachineinstances").WithVersion("v1"), subresource,
		admission.Create, &metav1.CreateOptions{}, false, nil)
}

func TestValidate(t *testing.T) {
	tcg := capability.Labels(capability.Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"})
	kvm := capability.Labels(capability.Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "kvm"})
	plain := &virtualization.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	passthrough := &virtualization.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "hv"}}
	passthrough.Spec.Domain.Features = &virtualization.Features{HypervPassthrough: &virtualization.HyperVPassthrough{}}

	for _, tc := range []struct {
		name    string
		nodes   []*corev1.Node
		vmi     *virtualization.VirtualMachineInstance
		refused string // a part of the 422's message; "" for accepted
	}{
		{"a plain VMI", []*corev1.Node{node("a", tcg)}, plain, ""},
		{"a node with KVM", []*corev1.Node{node("a", tcg), node("b", kvm)}, passthrough, ""},
		{"only TCG nodes", []*corev1.Node{node("a", tcg), node("c", nil)}, passthrough,
			"spec.domain.features.hypervPassthrough: Forbidden: needs node capability kvm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			for _, n := range tc.nodes {
				objs = append(objs, n)
			}
			f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
			p := New()
			p.SetExternalKubeInformerFactory(f)
			if err := p.ValidateInitialization(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			f.Start(ctx.Done())
			defer f.Shutdown() // after cancel: it waits for the informers to stop
			defer cancel()
			err := p.Validate(t.Context(), attrs(tc.vmi, ""), nil)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("got %v, want a 422 containing %q", err, tc.refused)
			}
			for _, n := range tc.nodes {
				if !strings.Contains(err.Error(), n.Name+" ") {
					t.Errorf("%q does not say what node %s reports", err, n.Name)
				}
			}
		})
	}
	// Subresources are not creates of a VMI.
	p := New()
	p.SetExternalKubeInformerFactory(informers.NewSharedInformerFactory(fake.NewClientset(), 0))
	if err := p.Validate(t.Context(), attrs(passthrough, "status"), nil); err != nil {
		t.Errorf("a subresource was checked: %v", err)
	}
}

func TestValidateInitialization(t *testing.T) {
	if err := New().ValidateInitialization(); err == nil {
		t.Error("a plugin without informers passed")
	}
}
