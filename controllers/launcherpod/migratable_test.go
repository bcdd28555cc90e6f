package launcherpod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func claimWithModes(name string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Status: corev1.PersistentVolumeClaimStatus{AccessModes: modes}}
}

func TestLiveMigratable(t *testing.T) {
	claims := map[string]*corev1.PersistentVolumeClaim{
		"shared": claimWithModes("shared", corev1.ReadWriteMany),
		"local":  claimWithModes("local", corev1.ReadWriteOnce),
		"golden": claimWithModes("golden", corev1.ReadOnlyMany),
	}
	pvc := func(name, claimName string, readOnly bool) virtv1.Volume {
		return virtv1.Volume{Name: name, VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{
			ClaimName: claimName, ReadOnly: readOnly}}}
	}
	for _, tt := range []struct {
		name       string
		mutate     func(*virtv1.VirtualMachineInstance)
		wantReason string
		wantInMsg  string
	}{
		{name: "pod-local disks", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Volumes = []virtv1.Volume{
				{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "img"}}},
				{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{}}},
				{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config"}}},
				{Name: "cfg", VolumeSource: virtv1.VolumeSource{ConfigMap: &virtv1.ConfigMapVolumeSource{}}},
			}
			v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{Container: &virtv1.KernelBootContainer{Image: "k"}}}
		}},
		{name: "ReadWriteMany claim", mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes = []virtv1.Volume{pvc("data", "shared", false)} }},
		{name: "read-only disk on a ReadOnlyMany claim", mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes = []virtv1.Volume{pvc("data", "golden", true)} }},
		{name: "ReadWriteOnce claim", wantReason: virtv1.ReasonDisksNotMigratable, wantInMsg: "volume data: claim local is not ReadWriteMany",
			mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes = []virtv1.Volume{pvc("data", "local", false)} }},
		{name: "writable disk on a ReadOnlyMany claim", wantReason: virtv1.ReasonDisksNotMigratable, wantInMsg: "volume data: claim golden",
			mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes = []virtv1.Volume{pvc("data", "golden", false)} }},
		{name: "missing claim", wantReason: virtv1.ReasonDisksNotMigratable, wantInMsg: "claim ns/gone not found",
			mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Volumes = []virtv1.Volume{pvc("data", "gone", false)} }},
		{name: "host disk", wantReason: virtv1.ReasonDisksNotMigratable, wantInMsg: "volume h is a host disk",
			mutate: func(v *virtv1.VirtualMachineInstance) {
				v.Spec.Volumes = []virtv1.Volume{{Name: "h", VolumeSource: virtv1.VolumeSource{HostDisk: &virtv1.HostDisk{Path: "/var/h.img"}}}}
			}},
		{name: "bridge on the pod network", wantReason: virtv1.ReasonInterfaceNotMigratable, wantInMsg: "interface default uses the bridge binding",
			mutate: func(v *virtv1.VirtualMachineInstance) {
				v.Spec.Networks = []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
				v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}}
			}},
		{name: "masquerade on the pod network", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, reason, msg := LiveMigratable(newVMI(tt.mutate), claims)
			wantStatus := corev1.ConditionTrue
			if tt.wantReason != "" {
				wantStatus = corev1.ConditionFalse
			}
			if status != wantStatus || reason != tt.wantReason || !strings.Contains(msg, tt.wantInMsg) {
				t.Errorf("LiveMigratable = %s, %q, %q; want %s, %q, a message with %q", status, reason, msg, wantStatus, tt.wantReason, tt.wantInMsg)
			}
		})
	}
}
