package launcherpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestClaimVolumes renders a Filesystem and a Block claim: the first is
// mounted where the launcher looks for its disk image, the second is a device
// of the compute container, as virt-controller recorded their modes in the
// VMI's volumeStatus.
func TestClaimVolumes(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{
			{Name: "files", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("fs-claim")}},
			{Name: "raw", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{
				ClaimName: "block-claim", ReadOnly: true}}},
			{Name: "unrecorded", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("other")}},
		}
		v.Status.VolumeStatus = []virtv1.VolumeStatus{
			{Name: "files", PersistentVolumeClaimInfo: &virtv1.PersistentVolumeClaimInfo{
				ClaimName: "fs-claim", VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)}},
			{Name: "raw", PersistentVolumeClaimInfo: &virtv1.PersistentVolumeClaimInfo{
				ClaimName: "block-claim", VolumeMode: ptr.To(corev1.PersistentVolumeBlock)}},
		}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	compute := pod.Spec.Containers[0]
	got := mounts(compute)
	for name, want := range map[string]string{"pvc-0": "/var/run/virt-pvcs/files", "pvc-2": "/var/run/virt-pvcs/unrecorded"} {
		if got[name] != want {
			t.Errorf("volume %s mounted at %q, want %q", name, got[name], want)
		}
	}
	if path, ok := got["pvc-1"]; ok {
		t.Errorf("the Block claim is mounted at %s", path)
	}
	wantDevices := []corev1.VolumeDevice{{Name: "pvc-1", DevicePath: layout.PVCDevice(layout.PVCDeviceRoot, "raw")}}
	if d := cmp.Diff(wantDevices, compute.VolumeDevices); d != "" {
		t.Errorf("compute volumeDevices (-want +got):\n%s", d)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name != "pvc-1" {
			continue
		}
		want := &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "block-claim", ReadOnly: true}
		if d := cmp.Diff(want, v.PersistentVolumeClaim); d != "" {
			t.Errorf("pod volume pvc-1 (-want +got):\n%s", d)
		}
		return
	}
	t.Errorf("the pod has no volume pvc-1 for the Block claim")
}
