package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// The shipped catalogue's instancetype and preference the test VM uses
// (artifacts/instancetypes): u1.small is 1 vCPU and 2Gi; cirros asks for
// virtio NICs and disks and fits the project's test guest.
const (
	catalogueInstancetype = "u1.small"
	cataloguePreference   = "cirros"
)

// TestInstancetypeVM: a VM sized by the catalogue's cluster instancetype
// u1.small and dressed by the cluster preference cirros boots the test
// guest with the instancetype's vCPUs and memory in its libvirt domain.
// virt-controller pins the VM to a copy of both
// (VirtualMachineInstancetypeRevisions in the platform's store), so
// after u1.small is edited a restart brings the guest back with the size it
// had; expand-spec answers the VM as a plain manifest of that size. When
// the VM goes, the garbage collector takes its revisions.
func TestInstancetypeVM(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	v1 := cluster.Virt.VirtualizationV1()

	small, err := v1.VirtualMachineClusterInstancetypes().Get(ctx, catalogueInstancetype, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the catalogue's %s: %v", catalogueInstancetype, err)
	}
	wantCPU, wantMemory := small.Spec.CPU.Guest, small.Spec.Memory.Guest.DeepCopy()
	if wantCPU != 1 || wantMemory.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Fatalf("the catalogue's %s is %d vCPUs and %s, want KubeVirt's 1 and 2Gi", catalogueInstancetype, wantCPU, wantMemory.String())
	}

	vm := exampleVM(t, "vm-instancetype.yaml")
	vm.Spec.Instancetype = &virtv1.InstancetypeMatcher{Kind: virtv1.ClusterInstancetypeKind, Name: catalogueInstancetype}
	vm.Spec.Preference = &virtv1.PreferenceMatcher{Kind: virtv1.ClusterPreferenceKind, Name: cataloguePreference}
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	vm, err = v1.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM: %v", err)
	}

	pinned, err := waitVM(ctx, cluster.Virt, ns, vm.Name, "pinned to revisions of its instancetype and preference", func(vm *virtv1.VirtualMachine) bool {
		return vm.Spec.Instancetype.RevisionName != "" && vm.Spec.Preference.RevisionName != ""
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pinned.Spec.Instancetype.RevisionName, pinned.Spec.Preference.RevisionName} {
		r, err := v1.VirtualMachineInstancetypeRevisions(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("revision %s: %v", name, err)
		} else if !metav1.IsControlledBy(r, pinned) {
			t.Errorf("revision %s is controlled by %v, want the VM", name, r.OwnerReferences)
		}
	}

	first := bootSized(ctx, t, ns, vm.Name, "", wantCPU, wantMemory)
	if a := first.Annotations; a[virtv1.ClusterInstancetypeAnnotation] != catalogueInstancetype || a[virtv1.ClusterPreferenceAnnotation] != cataloguePreference {
		t.Errorf("the instance's annotations %v do not name %s and %s", a, catalogueInstancetype, cataloguePreference)
	}
	if ifs := first.Spec.Domain.Devices.Interfaces; len(ifs) != 1 || ifs[0].Model != "virtio" {
		t.Errorf("the instance's interfaces %+v, want the pod NIC, virtio", ifs)
	}

	// The catalogue is the cluster's: the edit is undone whatever happens
	// to the test (and `make up` applies the catalogue again).
	t.Cleanup(func() { restoreInstancetype(t, small) })
	edited := &virtv1.VirtualMachineClusterInstancetype{}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := v1.VirtualMachineClusterInstancetypes().Get(ctx, catalogueInstancetype, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.CPU.Guest, cur.Spec.Memory.Guest = 2, resource.MustParse("1Gi")
		edited, err = v1.VirtualMachineClusterInstancetypes().Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("edit %s: %v", catalogueInstancetype, err)
	}
	t.Logf("edited %s to 2 vCPUs and 1Gi (generation %d)", catalogueInstancetype, edited.Generation)

	t.Run("a restart keeps the pinned size", func(t *testing.T) {
		if err := put(ctx, cluster.Virt, ns, "virtualmachines", vm.Name, "restart", &virtv1.RestartOptions{}); err != nil {
			t.Fatal(err)
		}
		bootSized(ctx, t, ns, vm.Name, first.UID, wantCPU, wantMemory)
		got, err := v1.VirtualMachines(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Instancetype.RevisionName != pinned.Spec.Instancetype.RevisionName {
			t.Errorf("the VM's instancetype revision moved from %s to %s", pinned.Spec.Instancetype.RevisionName, got.Spec.Instancetype.RevisionName)
		}
	})

	t.Run("expand-spec answers the VM without references, at the pinned size", func(t *testing.T) {
		expanded := expandSpec(ctx, t, ns, vm.Name)
		if expanded.Spec.Instancetype != nil || expanded.Spec.Preference != nil {
			t.Errorf("the expanded VM still references %+v and %+v", expanded.Spec.Instancetype, expanded.Spec.Preference)
		}
		if expanded.Name != vm.Name || expanded.Spec.Template == nil {
			t.Fatalf("expand-spec answered %s with template %v", expanded.Name, expanded.Spec.Template)
		}
		d := expanded.Spec.Template.Spec.Domain
		if n := vcpus(d.CPU); n != wantCPU {
			t.Errorf("expanded cpu %+v: %d vCPUs, want the pinned %d", d.CPU, n, wantCPU)
		}
		if d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.Cmp(wantMemory) != 0 {
			t.Errorf("expanded memory %+v, want the pinned %s, not the edited 1Gi", d.Memory, wantMemory.String())
		}
		if ifs := d.Devices.Interfaces; len(ifs) != 1 || ifs[0].Model != "virtio" {
			t.Errorf("expanded interfaces %+v, want the pod NIC, virtio", ifs)
		}
		if d.Machine == nil || d.Machine.Type != "q35" {
			t.Errorf("expanded machine %+v, want the default q35: the template is defaulted", d.Machine)
		}
	})

	// The edit did take: a VM that references u1.small now, not yet
	// pinned, expands to the edited size.
	t.Run("a new VM gets the edited instancetype", func(t *testing.T) {
		fresh := exampleVM(t, "vm-instancetype.yaml")
		fresh.Name = "fresh"
		fresh.Spec.Instancetype = &virtv1.InstancetypeMatcher{Kind: virtv1.ClusterInstancetypeKind, Name: catalogueInstancetype}
		fresh.Spec.Preference = &virtv1.PreferenceMatcher{Kind: virtv1.ClusterPreferenceKind, Name: cataloguePreference}
		fresh.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
		if _, err := v1.VirtualMachines(ns).Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		d := expandSpec(ctx, t, ns, fresh.Name).Spec.Template.Spec.Domain
		if n := vcpus(d.CPU); n != 2 || d.Memory == nil || d.Memory.Guest == nil || d.Memory.Guest.Cmp(resource.MustParse("1Gi")) != 0 {
			t.Errorf("expanded cpu %+v, memory %+v; want the edited 2 vCPUs and 1Gi", d.CPU, d.Memory)
		}
	})

	// kube-controller-manager's garbage collector walks the aggregated
	// API too: the VM's revisions go with it.
	t.Run("the revisions go with the VM", func(t *testing.T) {
		if err := v1.VirtualMachines(ns).Delete(ctx, vm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		names := []string{pinned.Spec.Instancetype.RevisionName, pinned.Spec.Preference.RevisionName}
		err := framework.WaitFor(ctx, 2*time.Minute, "the VM's revisions garbage-collected", func(ctx context.Context) (bool, error) {
			for _, name := range names {
				_, err := v1.VirtualMachineInstancetypeRevisions(ns).Get(ctx, name, metav1.GetOptions{})
				if err == nil {
					return false, nil
				}
				if !apierrors.IsNotFound(err) {
					return false, err
				}
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// bootSized waits for the VM's instance other than previous to run with
// the test guest booted, and checks its size in the VMI's spec and in the
// libvirt domain it runs as.
func bootSized(ctx context.Context, t *testing.T, ns, name string, previous types.UID, cpus uint32, memory resource.Quantity) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.WaitVMI(ctx, ns, name, framework.BootTimeout, "a new Running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		if v.UID == previous {
			return false, fmt.Errorf("still the previous instance %s", previous)
		}
		return v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, framework.GuestReadyMarker, 2*time.Minute); err != nil {
		t.Fatalf("%v\nserial console:\n%s", err, serial.Output())
	}

	if n := vcpus(vmi.Spec.Domain.CPU); n != cpus {
		t.Errorf("the instance's cpu %+v: %d vCPUs, want %d", vmi.Spec.Domain.CPU, n, cpus)
	}
	if m := vmi.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.Cmp(memory) != 0 {
		t.Errorf("the instance's memory %+v, want %s", m, memory.String())
	}

	d, err := cluster.LiveDomain(ctx, pod, vmi)
	if err != nil {
		t.Fatal(err)
	}
	if d.VCPU == nil || d.VCPU.Value != uint(cpus) {
		t.Errorf("the libvirt domain has vcpu %+v, want %d", d.VCPU, cpus)
	}
	bytes, err := framework.DomainMemoryBytes(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(memory.Value()); bytes != want {
		t.Errorf("the libvirt domain has %d bytes of memory (%+v), want %d (%s)", bytes, d.Memory, want, memory.String())
	}
	t.Logf("instance %s: libvirt domain %s with %d vCPU(s) and %d MiB, guest ready", vmi.UID, d.Name, d.VCPU.Value, bytes>>20)
	return vmi
}

// expandSpec GETs a VM's expand-spec subresource with the user's kubectl.
func expandSpec(ctx context.Context, t *testing.T, ns, name string) *virtv1.VirtualMachine {
	t.Helper()
	out, err := cluster.Kubectl(ctx, "get", "--raw",
		fmt.Sprintf("/apis/virtualization.kubevirt.io/v1/namespaces/%s/virtualmachines/%s/expand-spec", ns, name))
	if err != nil {
		t.Fatal(err)
	}
	vm := &virtv1.VirtualMachine{}
	if err := json.Unmarshal([]byte(out), vm); err != nil {
		t.Fatalf("expand-spec answered %q: %v", out, err)
	}
	if vm.Kind != "VirtualMachine" {
		t.Errorf("expand-spec answered a %q, want a VirtualMachine", vm.Kind)
	}
	return vm
}

// restoreInstancetype puts a cluster instancetype's spec back as it was.
func restoreInstancetype(t *testing.T, was *virtv1.VirtualMachineClusterInstancetype) {
	ctx := context.Background()
	its := cluster.Virt.VirtualizationV1().VirtualMachineClusterInstancetypes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := its.Get(ctx, was.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec = *was.Spec.DeepCopy()
		_, err = its.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Errorf("restore %s: %v", was.Name, err)
	}
}

func vcpus(cpu *virtv1.CPU) uint32 {
	if cpu == nil {
		return 0
	}
	return cpu.Sockets * cpu.Cores * cpu.Threads
}
