package disk

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
)

func vmiWith(volumes ...virtv1.Volume) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "uid-1"},
		Spec:       virtv1.VirtualMachineInstanceSpec{Volumes: volumes},
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrepare(t *testing.T) {
	dirs := Dirs{Disks: t.TempDir(), PVCRoot: t.TempDir(), Secrets: t.TempDir()}
	write(t, filepath.Join(dirs.Secrets, "ci2", "userdata", "userData"), []byte("#cloud-config\nfrom: secret\n"))
	write(t, filepath.Join(dirs.PVCRoot, "data", "disk.img"), make([]byte, 4096))
	vmi := vmiWith(
		virtv1.Volume{Name: "data", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{}}},
		virtv1.Volume{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
		virtv1.Volume{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
			UserDataBase64: base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))}}},
		virtv1.Volume{Name: "ci2", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
			SecretRef: &corev1.LocalObjectReference{Name: "userdata"}}}},
	)
	got, err := Prepare(vmi, dirs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]domain.Disk{
		"data":    {Path: filepath.Join(dirs.PVCRoot, "data", "disk.img"), Format: domain.FormatRaw},
		"scratch": {Path: filepath.Join(dirs.Disks, "scratch", "disk.img"), Format: domain.FormatRaw},
		"ci":      {Path: filepath.Join(dirs.Disks, "ci", "nocloud.iso"), Format: domain.FormatRaw},
		"ci2":     {Path: filepath.Join(dirs.Disks, "ci2", "nocloud.iso"), Format: domain.FormatRaw},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("volume %s: got %+v, want %+v", name, got[name], w)
		}
	}
	st, err := os.Stat(want["scratch"].Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 1<<30 {
		t.Errorf("empty disk size = %d, want 1Gi", st.Size())
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; blocks > 8 {
		t.Errorf("empty disk is not sparse: %d blocks allocated", blocks)
	}
	// A second Prepare keeps the empty disk and what the guest wrote to it.
	write(t, want["scratch"].Path+".marker", nil)
	f, _ := os.OpenFile(want["scratch"].Path, os.O_WRONLY, 0)
	f.WriteAt([]byte("guest data"), 0)
	f.Close()
	if _, err := Prepare(vmi, dirs); err != nil {
		t.Fatalf("second Prepare: %v", err)
	}
	b := make([]byte, 10)
	f, _ = os.Open(want["scratch"].Path)
	f.ReadAt(b, 0)
	f.Close()
	if string(b) != "guest data" {
		t.Errorf("second Prepare lost the empty disk's content: %q", b)
	}
}

func TestPrepareErrors(t *testing.T) {
	dirs := Dirs{Disks: t.TempDir(), PVCRoot: t.TempDir()}
	for name, tc := range map[string]struct {
		vol     virtv1.Volume
		wantErr string
	}{
		"secret without key": {virtv1.Volume{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
			SecretRef: &corev1.LocalObjectReference{Name: "s"}}}}, "none of the keys [userdata userData]"},
		"bad base64": {virtv1.Volume{Name: "ci", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{
			UserDataBase64: "!!"}}}, "userDataBase64"},
		"zero capacity": {virtv1.Volume{Name: "e", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{}}}, "capacity must be positive"},
		"no source":     {virtv1.Volume{Name: "x"}, "no supported volume source"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(vmiWith(tc.vol), dirs)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Prepare error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
