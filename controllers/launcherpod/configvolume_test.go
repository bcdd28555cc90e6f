package launcherpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Config volumes and access-credential secrets are ordinary pod volumes the
// kubelet projects read-only; a serviceAccount volume makes the account the
// pod's, without automounting its token anywhere else.
func TestNewConfigVolumes(t *testing.T) {
	vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Volumes = []virtv1.Volume{
			{Name: "cm", VolumeSource: virtv1.VolumeSource{ConfigMap: &virtv1.ConfigMapVolumeSource{Name: "app"}}},
			{Name: "sec", VolumeSource: virtv1.VolumeSource{Secret: &virtv1.SecretVolumeSource{SecretName: "s"}}},
			{Name: "sa", VolumeSource: virtv1.VolumeSource{ServiceAccount: &virtv1.ServiceAccountVolumeSource{ServiceAccountName: "robot"}}},
			{Name: "dapi", VolumeSource: virtv1.VolumeSource{DownwardAPI: &virtv1.DownwardAPIVolumeSource{Fields: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
			{Name: "sp", VolumeSource: virtv1.VolumeSource{Sysprep: &virtv1.SysprepSource{Secret: &corev1.LocalObjectReference{Name: "unattend"}}}},
			{Name: "cd", VolumeSource: virtv1.VolumeSource{CloudInitConfigDrive: &virtv1.CloudInitConfigDriveSource{SecretRef: &corev1.LocalObjectReference{Name: "ud"}}}},
		}
		v.Spec.AccessCredentials = []virtv1.AccessCredential{{SSHPublicKey: &virtv1.SSHPublicKeyAccessCredential{
			Source: virtv1.SSHPublicKeyAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "keys"}}}}}
	})
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "robot" || *pod.Spec.AutomountServiceAccountToken {
		t.Errorf("serviceAccountName %q, automount %v; want robot, false", pod.Spec.ServiceAccountName, *pod.Spec.AutomountServiceAccountToken)
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if s := vols["config-0"].ConfigMap; s == nil || s.Name != "app" {
		t.Errorf("config-0 = %+v, want ConfigMap app", vols["config-0"])
	}
	if s := vols["config-1"].Secret; s == nil || s.SecretName != "s" {
		t.Errorf("config-1 = %+v, want Secret s", vols["config-1"])
	}
	if p := vols["config-2"].Projected; p == nil || len(p.Sources) != 3 || p.Sources[0].ServiceAccountToken == nil {
		t.Errorf("config-2 = %+v, want token, ca.crt and namespace", vols["config-2"])
	}
	if d := vols["config-3"].DownwardAPI; d == nil || d.Items[0].Path != "labels" {
		t.Errorf("config-3 = %+v, want the downward API's fields", vols["config-3"])
	}
	if s := vols["config-4"].Secret; s == nil || s.SecretName != "unattend" {
		t.Errorf("config-4 = %+v, want Secret unattend", vols["config-4"])
	}
	if s := vols["cloudinit-5-userdata"].Secret; s == nil || s.SecretName != "ud" {
		t.Errorf("cloudinit-5-userdata = %+v", vols["cloudinit-5-userdata"])
	}
	if s := vols["access-0"].Secret; s == nil || s.SecretName != "keys" {
		t.Errorf("access-0 = %+v, want Secret keys", vols["access-0"])
	}
	want := map[string]string{
		"config-0": "/var/run/virt-config/cm", "config-1": "/var/run/virt-config/sec", "config-2": "/var/run/virt-config/sa",
		"config-3": "/var/run/virt-config/dapi", "config-4": "/var/run/virt-config/sp",
		"cloudinit-5-userdata": "/var/run/virt-secrets/cd/userdata", "access-0": "/var/run/virt-access/0",
	}
	got := mounts(pod.Spec.Containers[0])
	for name, path := range want {
		if got[name] != path {
			t.Errorf("mount %s at %q, want %q", name, got[name], path)
		}
	}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if _, ok := want[m.Name]; ok && !m.ReadOnly {
			t.Errorf("mount %s is writable", m.Name)
		}
	}
}
