package validation

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"kubevirt.dev/virt/apis/virtualization"
)

func sshKeys(m virtualization.SSHPublicKeyAccessCredentialPropagationMethod) virtualization.AccessCredential {
	return virtualization.AccessCredential{SSHPublicKey: &virtualization.SSHPublicKeyAccessCredential{
		Source:            virtualization.SSHPublicKeyAccessCredentialSource{Secret: &virtualization.AccessCredentialSecretSource{SecretName: "keys"}},
		PropagationMethod: m,
	}}
}

func TestValidateConfigVolumesAndAccessCredentials(t *testing.T) {
	agent := virtualization.SSHPublicKeyAccessCredentialPropagationMethod{
		QemuGuestAgent: &virtualization.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{Users: []string{"debian"}}}
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachineInstance)
		wantPaths []string
	}{
		{name: "configMap, secret, downwardAPI and serviceAccount volumes are accepted", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes = append(v.Spec.Volumes,
				virtualization.Volume{Name: "cm", VolumeSource: virtualization.VolumeSource{ConfigMap: &virtualization.ConfigMapVolumeSource{Name: "app"}}},
				virtualization.Volume{Name: "sec", VolumeSource: virtualization.VolumeSource{Secret: &virtualization.SecretVolumeSource{SecretName: "app", VolumeLabel: "OEMDRV"}}},
				virtualization.Volume{Name: "dapi", VolumeSource: virtualization.VolumeSource{DownwardAPI: &virtualization.DownwardAPIVolumeSource{}}},
				virtualization.Volume{Name: "sa", VolumeSource: virtualization.VolumeSource{ServiceAccount: &virtualization.ServiceAccountVolumeSource{ServiceAccountName: "default"}}},
				virtualization.Volume{Name: "sysprep", VolumeSource: virtualization.VolumeSource{Sysprep: &virtualization.SysprepSource{ConfigMap: &corev1.LocalObjectReference{Name: "unattend"}}}},
			)
		}},
		{name: "a second serviceAccount volume", mutate: func(v *virtualization.VirtualMachineInstance) {
			for _, n := range []string{"sa1", "sa2"} {
				v.Spec.Volumes = append(v.Spec.Volumes, virtualization.Volume{Name: n, VolumeSource: virtualization.VolumeSource{
					ServiceAccount: &virtualization.ServiceAccountVolumeSource{ServiceAccountName: "default"}}})
			}
		}, wantPaths: []string{"spec.volumes[3].serviceAccount"}},
		{name: "a configMap without a name, a label too long", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes = append(v.Spec.Volumes, virtualization.Volume{Name: "cm", VolumeSource: virtualization.VolumeSource{
				ConfigMap: &virtualization.ConfigMapVolumeSource{VolumeLabel: "a-label-much-longer-than-iso-9660-allows"}}})
		}, wantPaths: []string{"spec.volumes[2].configMap.name", "spec.volumes[2].configMap.volumeLabel"}},
		{name: "sysprep needs exactly one source", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes = append(v.Spec.Volumes, virtualization.Volume{Name: "sp", VolumeSource: virtualization.VolumeSource{Sysprep: &virtualization.SysprepSource{}}})
		}, wantPaths: []string{"spec.volumes[2].sysprep"}},
		{name: "a config drive takes cloud-init's rules", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].VolumeSource = virtualization.VolumeSource{CloudInitConfigDrive: &virtualization.CloudInitConfigDriveSource{UserData: "a", UserDataBase64: "YQ=="}}
		}, wantPaths: []string{"spec.volumes[1].cloudInitConfigDrive"}},
		{name: "guest agent keys are accepted", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.AccessCredentials = []virtualization.AccessCredential{sshKeys(agent)}
		}},
		{name: "guest agent keys need users", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.AccessCredentials = []virtualization.AccessCredential{sshKeys(virtualization.SSHPublicKeyAccessCredentialPropagationMethod{
				QemuGuestAgent: &virtualization.QemuGuestAgentSSHPublicKeyAccessCredentialPropagation{}})}
		}, wantPaths: []string{"spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users"}},
		{name: "noCloud keys need a cloudInitNoCloud volume, configDrive keys a config drive", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.AccessCredentials = []virtualization.AccessCredential{
				sshKeys(virtualization.SSHPublicKeyAccessCredentialPropagationMethod{NoCloud: &virtualization.NoCloudSSHPublicKeyAccessCredentialPropagation{}}),
				sshKeys(virtualization.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &virtualization.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}}),
			}
		}, wantPaths: []string{"spec.accessCredentials[1].sshPublicKey.propagationMethod.configDrive"}},
		{name: "one propagation method, a secret, one kind", mutate: func(v *virtualization.VirtualMachineInstance) {
			both := agent
			both.NoCloud = &virtualization.NoCloudSSHPublicKeyAccessCredentialPropagation{}
			noSecret := sshKeys(agent)
			noSecret.SSHPublicKey.Source.Secret = nil
			v.Spec.AccessCredentials = []virtualization.AccessCredential{sshKeys(both), noSecret, {}}
		}, wantPaths: []string{
			"spec.accessCredentials[0].sshPublicKey.propagationMethod",
			"spec.accessCredentials[1].sshPublicKey.source.secret.secretName",
			"spec.accessCredentials[2]",
		}},
		{name: "passwords go through the guest agent", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.AccessCredentials = []virtualization.AccessCredential{{UserPassword: &virtualization.UserPasswordAccessCredential{
				Source: virtualization.UserPasswordAccessCredentialSource{Secret: &virtualization.AccessCredentialSecretSource{SecretName: "pw"}}}}}
		}, wantPaths: []string{"spec.accessCredentials[0].userPassword.propagationMethod.qemuGuestAgent"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := validVMI()
			tc.mutate(vmi)
			// Each added volume is a disk, as config volumes are.
			for _, vol := range vmi.Spec.Volumes[2:] {
				vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, virtualization.Disk{
					Name: vol.Name, DiskDevice: virtualization.DiskDevice{Disk: &virtualization.DiskTarget{Bus: "virtio"}}})
			}
			var got []string
			for _, e := range ValidateVirtualMachineInstance(vmi) {
				got = append(got, e.Field)
			}
			slices.Sort(got)
			want := slices.Clone(tc.wantPaths)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("error paths = %v, want %v; errors: %v", got, want, ValidateVirtualMachineInstance(vmi))
			}
		})
	}
}
