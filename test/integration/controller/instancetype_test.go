package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestInstancetypeRevision: virt-controller pins a VM to a copy of its
// instancetype (a VirtualMachineInstancetypeRevision in the platform's
// store, owned by the VM, named in spec.instancetype.revisionName) before it creates an
// instance, so an edit of the instancetype afterwards does not change the
// VM's instances; expand-spec answers the pinned copy too.
func TestInstancetypeRevision(t *testing.T) {
	ctx := t.Context()
	explainFailure(t)
	if err := waitQuiet(ctx, quietTimeout); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	v1 := cluster.Virt.VirtualizationV1()

	// The test guest's size, as a namespaced instancetype.
	it, err := v1.VirtualMachineInstancetypes(ns).Create(ctx, &virtv1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: virtv1.VirtualMachineInstancetypeSpec{
			CPU:    virtv1.CPUInstancetype{Guest: 1},
			Memory: virtv1.MemoryInstancetype{Guest: resource.MustParse("128Mi")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create instancetype: %v", err)
	}
	const name = "sized"
	spec := tinySpec(t, name)
	spec.Domain.Resources = virtv1.ResourceRequirements{} // the instancetype's
	spec.Domain.CPU, spec.Domain.Memory = nil, nil
	vm, err := v1.VirtualMachines(ns).Create(ctx, &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy:  ptr.To(virtv1.RunStrategyHalted),
			Instancetype: &virtv1.InstancetypeMatcher{Name: "tiny", Kind: virtv1.InstancetypeKind},
			Template:     &virtv1.VirtualMachineInstanceTemplateSpec{Spec: spec},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM: %v", err)
	}

	var revision string
	err = framework.WaitFor(ctx, time.Minute, "VM "+name+" pinned to a revision", func(ctx context.Context) (bool, error) {
		got, err := v1.VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		revision = got.Spec.Instancetype.RevisionName
		return revision != "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := v1.VirtualMachineInstancetypeRevisions(ns).Get(ctx, revision, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("revision %s: %v", revision, err)
	}
	if !metav1.IsControlledBy(r, vm) {
		t.Errorf("revision %s owned by %v, want the VM", revision, r.OwnerReferences)
	}

	it.Spec.Memory.Guest = resource.MustParse("256Mi")
	if _, err := v1.VirtualMachineInstancetypes(ns).Update(ctx, it, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("edit instancetype: %v", err)
	}
	expanded := &virtv1.VirtualMachine{}
	err = v1.RESTClient().Get().Namespace(ns).Resource("virtualmachines").Name(name).SubResource("expand-spec").Do(ctx).Into(expanded)
	if err != nil {
		t.Fatalf("expand-spec: %v", err)
	}
	if m := expanded.Spec.Template.Spec.Domain.Memory; m == nil || m.Guest.String() != "128Mi" {
		t.Errorf("expand-spec memory %v, want the pinned 128Mi", m)
	}

	got, err := v1.VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	if _, err := v1.VirtualMachines(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("start VM: %v", err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if m := vmi.Spec.Domain.Memory; m == nil || m.Guest.String() != "128Mi" {
		t.Errorf("instance memory %v, want the pinned 128Mi, not the edited 256Mi", m)
	}
	if vmi.Annotations[virtv1.InstancetypeAnnotation] != "tiny" {
		t.Errorf("instance annotations %v", vmi.Annotations)
	}
	if c := vmi.Spec.Domain.CPU; c == nil || c.Sockets*c.Cores*c.Threads != 1 {
		t.Errorf("instance cpu %+v, want the instancetype's one vCPU", c)
	}
	if _, ok := vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; ok {
		t.Errorf("instance requests memory %v without overcommit", vmi.Spec.Domain.Resources.Requests)
	}
	if err := v1.VirtualMachines(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete VM: %v", err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, name, DeleteTimeout); err != nil {
		t.Error(err)
	}
}
