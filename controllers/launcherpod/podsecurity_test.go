package launcherpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestPodSecurity runs the kube-apiserver's own PodSecurity checks on
// launcher pods of every shape: they must be admitted in namespaces that
// enforce baseline, and, when the launchers run as a non-root user (the
// default), restricted. No hostPath, host namespace, added capability or
// unsafe sysctl may creep back in.
func TestPodSecurity(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	full := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{
			{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:1"}}},
			{Name: "claim", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("pvc1")}},
			{Name: "block", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: claim("pvc2")}},
			{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
				SecretRef: &corev1.LocalObjectReference{Name: "ud"}, NetworkDataSecretRef: &corev1.LocalObjectReference{Name: "nd"}}}},
			{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
		}
		v.Status.VolumeStatus = []virtv1.VolumeStatus{{Name: "block", PersistentVolumeClaimInfo: &virtv1.PersistentVolumeClaimInfo{
			VolumeMode: ptr.To(corev1.PersistentVolumeBlock)}}}
		v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{Container: &virtv1.KernelBootContainer{
			Image: "kernel:1", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd"}}}
	})
	imageUser := testConfig
	imageUser.RunAsUser = nil
	tun := testConfig
	tun.TunDevice = true
	cases := []struct {
		name       string
		vmi        *virtv1.VirtualMachineInstance
		cfg        Config
		restricted bool
	}{
		{"minimal", newVMI(nil), testConfig, true},
		{"every volume kind, kernel boot", full, testConfig, true},
		{"tun device", full, tun, true},
		// The image's user may be root: restricted refuses that, baseline
		// does not.
		{"the image's user", full, imageUser, false},
	}
	levels := func(restricted bool) []psapi.Level {
		if restricted {
			return []psapi.Level{psapi.LevelBaseline, psapi.LevelRestricted}
		}
		return []psapi.Level{psapi.LevelBaseline}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod, err := New(c.vmi, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, level := range levels(c.restricted) {
				res := policy.AggregateCheckResults(eval.EvaluatePod(psapi.LevelVersion{Level: level, Version: psapi.LatestVersion()},
					&pod.ObjectMeta, &pod.Spec))
				if !res.Allowed {
					t.Errorf("PodSecurity %s refuses the launcher pod: %s: %s", level, res.ForbiddenReason(), res.ForbiddenDetail())
				}
			}
		})
	}

	// The check can fail: the node-wide hostPath launchers mounted until
	// issue 23 is refused by baseline.
	pod, err := New(full, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "virt-capabilities-cache", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/virt/launcher-capabilities-cache"}}})
	res := policy.AggregateCheckResults(eval.EvaluatePod(psapi.LevelVersion{Level: psapi.LevelBaseline, Version: psapi.LatestVersion()},
		&pod.ObjectMeta, &pod.Spec))
	if res.Allowed {
		t.Errorf("baseline admits a launcher pod with a hostPath volume")
	}
}
