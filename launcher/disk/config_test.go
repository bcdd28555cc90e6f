package disk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/configdrive"
	"kubevirt.dev/virt/launcher/isoimage"
	"kubevirt.dev/virt/launcher/layout"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPrepareConfigVolumesAndConfigDrive(t *testing.T) {
	tmp := t.TempDir()
	dirs := Dirs{Disks: filepath.Join(tmp, "disks"), Config: filepath.Join(tmp, "config"), Access: filepath.Join(tmp, "access"), Secrets: filepath.Join(tmp, "secrets")}
	writeFiles(t, layout.ConfigDir(dirs.Config, "cm"), map[string]string{"greeting": "hello"})
	writeFiles(t, layout.ConfigDir(dirs.Config, "sa"), map[string]string{"token": "eyJ", "ca.crt": "CA", "namespace": "ns"})
	writeFiles(t, layout.ConfigDir(dirs.Config, "sp"), map[string]string{"Autounattend.xml": "<unattend/>"})
	writeFiles(t, layout.AccessCredentialDir(dirs.Access, 0), map[string]string{"key": "ssh-ed25519 AAAA me\n"})
	vmi := &virtv1.VirtualMachineInstance{}
	vmi.Name, vmi.UID = "vm", "uid-1"
	vmi.Spec.Volumes = []virtv1.Volume{
		{Name: "cm", VolumeSource: virtv1.VolumeSource{ConfigMap: &virtv1.ConfigMapVolumeSource{Name: "app", VolumeLabel: "OEMDRV"}}},
		{Name: "sa", VolumeSource: virtv1.VolumeSource{ServiceAccount: &virtv1.ServiceAccountVolumeSource{ServiceAccountName: "default"}}},
		{Name: "sp", VolumeSource: virtv1.VolumeSource{Sysprep: &virtv1.SysprepSource{}}},
		{Name: "cd", VolumeSource: virtv1.VolumeSource{CloudInitConfigDrive: &virtv1.CloudInitConfigDriveSource{UserData: "#cloud-config\n"}}},
	}
	vmi.Spec.AccessCredentials = []virtv1.AccessCredential{{SSHPublicKey: &virtv1.SSHPublicKeyAccessCredential{
		Source:            virtv1.SSHPublicKeyAccessCredentialSource{Secret: &virtv1.AccessCredentialSecretSource{SecretName: "keys"}},
		PropagationMethod: virtv1.SSHPublicKeyAccessCredentialPropagationMethod{ConfigDrive: &virtv1.ConfigDriveSSHPublicKeyAccessCredentialPropagation{}},
	}}}
	disks, err := Prepare(vmi, dirs)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range disks {
		if !d.ReadOnly {
			t.Errorf("disk %s is writable", name)
		}
	}
	check := func(volume, label string, want map[string]string) map[string][]byte {
		t.Helper()
		gotLabel, files, err := isoimage.Read(disks[volume].Path, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if gotLabel != label {
			t.Errorf("%s: label %q, want %q", volume, gotLabel, label)
		}
		for name, content := range want {
			if string(files[name]) != content {
				t.Errorf("%s: %s = %q, want %q", volume, name, files[name], content)
			}
		}
		return files
	}
	check("cm", "OEMDRV", map[string]string{"greeting": "hello"})
	check("sa", ConfigLabel, map[string]string{"token": "eyJ", "ca.crt": "CA", "namespace": "ns"})
	// Plain ISO 9660 names are lower case (isoimage's doc).
	check("sp", SysprepLabel, map[string]string{"autounattend.xml": "<unattend/>"})
	files := check("cd", configdrive.VolumeLabel, map[string]string{configdrive.UserDataFile: "#cloud-config\n"})
	var md struct {
		UUID       string            `json:"uuid"`
		PublicKeys map[string]string `json:"public_keys"`
	}
	if err := json.Unmarshal(files[configdrive.MetaDataFile], &md); err != nil {
		t.Fatal(err)
	}
	if md.UUID != "uid-1" || md.PublicKeys["0"] != "ssh-ed25519 AAAA me" {
		t.Errorf("meta data = %s", files[configdrive.MetaDataFile])
	}
}

func TestPrepareSysprepNeedsAnAnswerFile(t *testing.T) {
	tmp := t.TempDir()
	dirs := Dirs{Disks: filepath.Join(tmp, "disks"), Config: filepath.Join(tmp, "config")}
	writeFiles(t, layout.ConfigDir(dirs.Config, "sp"), map[string]string{"other.xml": "x"})
	vmi := &virtv1.VirtualMachineInstance{}
	vmi.Spec.Volumes = []virtv1.Volume{{Name: "sp", VolumeSource: virtv1.VolumeSource{Sysprep: &virtv1.SysprepSource{}}}}
	if _, err := Prepare(vmi, dirs); err == nil {
		t.Error("a sysprep volume without autounattend.xml or unattend.xml was accepted")
	}
}
