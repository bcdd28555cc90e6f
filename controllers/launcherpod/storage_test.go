package launcherpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestEphemeralStorage: the emptyDirs a guest or tenant can fill but that
// hold no guest disk have a sizeLimit; the disks' volume has none. The compute container
// requests the bounded volumes' limits as ephemeral storage, and adds them
// to a limit the VMI sets.
func TestEphemeralStorage(t *testing.T) {
	q := resource.MustParse
	kernelBoot := func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{Container: &virtv1.KernelBootContainer{
			Image: "kernel:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}}}
		v.Spec.Volumes = []virtv1.Volume{{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:1"}}}}
	}
	tests := []struct {
		name           string
		mutate         func(*virtv1.VirtualMachineInstance)
		request, limit string // of the compute container; "" for none
	}{
		{name: "no ephemeral storage of its own", mutate: kernelBoot, request: "128Mi"},
		{name: "the VMI's request and limit", mutate: func(v *virtv1.VirtualMachineInstance) {
			kernelBoot(v)
			v.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceEphemeralStorage: q("1Gi")}
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: q("2Gi")}
		}, request: "1152Mi", limit: "2176Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := New(newVMI(tt.mutate), testConfig)
			if err != nil {
				t.Fatal(err)
			}
			wantLimits := map[string]string{
				layout.PrivateVolume:    "64Mi",
				layout.ToolsVolume:      "64Mi",
				layout.KernelBootVolume: "1Mi", // records and links
				layout.DisksVolume:      "",
			}
			for _, v := range pod.Spec.Volumes {
				if v.EmptyDir == nil {
					continue
				}
				want, known := wantLimits[v.Name]
				if !known {
					t.Errorf("emptyDir %s not accounted for", v.Name)
					continue
				}
				delete(wantLimits, v.Name)
				got := ""
				if v.EmptyDir.SizeLimit != nil {
					got = v.EmptyDir.SizeLimit.String()
				}
				if got != want {
					t.Errorf("emptyDir %s sizeLimit %q, want %q", v.Name, got, want)
				}
			}
			if len(wantLimits) > 0 {
				t.Errorf("emptyDirs missing: %v", wantLimits)
			}
			c := pod.Spec.Containers[0]
			if got := c.Resources.Requests[corev1.ResourceEphemeralStorage]; got.Cmp(q(tt.request)) != 0 {
				t.Errorf("ephemeral-storage request %s, want %s", got.String(), tt.request)
			}
			got, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]
			switch {
			case tt.limit == "" && ok:
				t.Errorf("ephemeral-storage limit %s, want none: it would evict a guest for writing its own disks", got.String())
			case tt.limit != "" && (!ok || got.Cmp(q(tt.limit)) != 0):
				t.Errorf("ephemeral-storage limit %s, want %s", got.String(), tt.limit)
			}
			// The request covers what the bounded volumes can hold.
			if r, o := c.Resources.Requests[corev1.ResourceEphemeralStorage], ephemeralStorageOverhead(); r.Cmp(o) < 0 {
				t.Errorf("request %s below the bounded volumes' %s", r.String(), o.String())
			}
		})
	}
}
