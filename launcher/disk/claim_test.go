package disk

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
)

const mib = 1 << 20

// claimVMI is a VMI with the persistentVolumeClaim volume "data" whose claim
// virt-controller recorded as info (none when nil).
func claimVMI(info *virtv1.PersistentVolumeClaimInfo) *virtv1.VirtualMachineInstance {
	vmi := vmiWith(virtv1.Volume{Name: "data", VolumeSource: virtv1.VolumeSource{
		PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}})
	if info != nil {
		vmi.Status.VolumeStatus = []virtv1.VolumeStatus{{Name: "data", PersistentVolumeClaimInfo: info}}
	}
	return vmi
}

func filesystemClaim(capacity string, overhead *virtv1.Percent) *virtv1.PersistentVolumeClaimInfo {
	info := &virtv1.PersistentVolumeClaimInfo{
		ClaimName:          "claim",
		VolumeMode:         ptr.To(corev1.PersistentVolumeFilesystem),
		FilesystemOverhead: overhead,
	}
	if capacity != "" {
		info.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	return info
}

// claimDirs are a pod's directories with the Filesystem claim of "data"
// mounted.
func claimDirs(t *testing.T) Dirs {
	t.Helper()
	dirs := Dirs{Disks: t.TempDir(), PVCRoot: t.TempDir(), PVCDevices: t.TempDir()}
	if err := os.Mkdir(filepath.Join(dirs.PVCRoot, "data"), 0o777); err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestClaimDiskImage follows the disk image on a Filesystem claim through
// the launchers of one VM's life: created sparse with the size KubeVirt
// gives it, then kept with the guest's data, whatever the claim says later.
func TestClaimDiskImage(t *testing.T) {
	dirs := claimDirs(t)
	image := filepath.Join(dirs.PVCRoot, "data", "disk.img")

	got, err := Prepare(claimVMI(filesystemClaim("1Gi", ptr.To[virtv1.Percent]("0.055"))), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (domain.Disk{Path: image, Format: domain.FormatRaw}); got["data"] != want {
		t.Errorf("disk %+v, want %+v", got["data"], want)
	}
	st, err := os.Stat(image)
	if err != nil {
		t.Fatal(err)
	}
	// 1 GiB less 5.5 % is 967.68 MiB: 967 MiB once aligned down.
	if st.Size() != 967*mib {
		t.Errorf("disk image of %d bytes, want 967 MiB (%d)", st.Size(), 967*mib)
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; blocks > 8 {
		t.Errorf("disk image is not sparse: %d blocks allocated", blocks)
	}
	if perm := st.Mode().Perm(); perm != 0o660 {
		t.Errorf("disk image mode %v, want 0660", perm)
	}

	f, err := os.OpenFile(image, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("guest data"), 4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, capacity := range []string{"1Gi", "512Mi", "4Gi", ""} {
		if _, err := Prepare(claimVMI(filesystemClaim(capacity, nil)), dirs); err != nil {
			t.Fatalf("Prepare again with capacity %q: %v", capacity, err)
		}
		st, err := os.Stat(image)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != 967*mib {
			t.Errorf("claim capacity %q: the disk image is now %d bytes, want it kept at 967 MiB", capacity, st.Size())
		}
		b := make([]byte, 10)
		f, _ := os.Open(image)
		f.ReadAt(b, 4096)
		f.Close()
		if string(b) != "guest data" {
			t.Errorf("claim capacity %q: the guest's data is gone: %q", capacity, b)
		}
	}
}

// An image someone put on the claim (an imported disk) is used as it is,
// in its format, however it compares to the claim's size.
func TestClaimDiskImageImported(t *testing.T) {
	dirs := claimDirs(t)
	image := filepath.Join(dirs.PVCRoot, "data", "disk.img")
	write(t, image, []byte("QFI\xfb\x00\x00\x00\x03rest"))
	if err := os.Truncate(image, 2<<30); err != nil {
		t.Fatal(err)
	}
	got, err := Prepare(claimVMI(filesystemClaim("1Gi", nil)), dirs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (domain.Disk{Path: image, Format: domain.FormatQCOW2}); got["data"] != want {
		t.Errorf("disk %+v, want %+v", got["data"], want)
	}
	if st, _ := os.Stat(image); st.Size() != 2<<30 {
		t.Errorf("the imported image is now %d bytes, want its 2 GiB", st.Size())
	}
}

func TestImageSize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		info     *virtv1.PersistentVolumeClaimInfo
		want     int64
		wantErr  string
		overhead string
	}{
		{name: "KubeVirt's default overhead", info: filesystemClaim("1Gi", nil), want: 967 * mib},
		{name: "no overhead", info: filesystemClaim("1Gi", ptr.To[virtv1.Percent]("0")), want: 1024 * mib},
		{name: "aligned down to MiB", info: filesystemClaim("10Mi", ptr.To[virtv1.Percent]("0.1")), want: 9 * mib},
		{name: "decimal capacity", info: filesystemClaim("2G", ptr.To[virtv1.Percent]("0.055")), want: 1802 * mib},
		{name: "exact arithmetic", info: filesystemClaim("100Mi", ptr.To[virtv1.Percent]("0.01")), want: 99 * mib},
		{name: "no record", info: nil, wantErr: "no persistentVolumeClaimInfo"},
		{name: "not bound", info: filesystemClaim("", nil), wantErr: `capacity of claim "claim" is unknown`},
		{name: "too small", info: filesystemClaim("1Mi", nil), wantErr: "less than 1 MiB"},
		{name: "whole volume", info: filesystemClaim("1Gi", ptr.To[virtv1.Percent]("1")), wantErr: "not a decimal in [0, 1)"},
		{name: "negative", info: filesystemClaim("1Gi", ptr.To[virtv1.Percent]("-0.1")), wantErr: "not a decimal in [0, 1)"},
		{name: "not a number", info: filesystemClaim("1Gi", ptr.To[virtv1.Percent]("5%")), wantErr: "not a decimal in [0, 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imageSize(tc.info)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("imageSize = %d, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("imageSize = %d (%.2f MiB), %v; want %d (%d MiB)", got, float64(got)/mib, err, tc.want, tc.want/mib)
			}
		})
	}
}

func TestClaimDiskErrors(t *testing.T) {
	t.Run("unmounted claim", func(t *testing.T) {
		dirs := Dirs{Disks: t.TempDir(), PVCRoot: t.TempDir(), PVCDevices: t.TempDir()}
		_, err := Prepare(claimVMI(filesystemClaim("1Gi", nil)), dirs)
		if err == nil || !strings.Contains(err.Error(), "no such file or directory") || !strings.Contains(err.Error(), `volume "data"`) {
			t.Fatalf("Prepare error = %v, want the missing mount of volume data", err)
		}
	})
	t.Run("unknown capacity", func(t *testing.T) {
		dirs := claimDirs(t)
		_, err := Prepare(claimVMI(nil), dirs)
		if err == nil || !strings.Contains(err.Error(), "capacity is unknown") {
			t.Fatalf("Prepare error = %v, want the unknown capacity", err)
		}
		if _, err := os.Stat(filepath.Join(dirs.PVCRoot, "data", "disk.img")); !os.IsNotExist(err) {
			t.Errorf("a disk image was left behind: %v", err)
		}
	})
}

// TestClaimBlockDevice passes a Block claim's device to the guest. The
// device node is made with mknod (root): it is only looked at, never opened.
func TestClaimBlockDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a block device node with mknod: run it as root")
	}
	blockInfo := &virtv1.PersistentVolumeClaimInfo{ClaimName: "claim", VolumeMode: ptr.To(corev1.PersistentVolumeBlock)}

	dirs := claimDirs(t)
	dev := filepath.Join(dirs.PVCDevices, "data")
	// Major 7 is the loop driver's; the node exists without the device.
	if err := unix.Mknod(dev, unix.S_IFBLK|0o660, int(unix.Mkdev(7, 200))); err != nil {
		t.Fatalf("mknod %s: %v", dev, err)
	}
	want := domain.Disk{Path: dev, Format: domain.FormatRaw, Block: true}
	for name, vmi := range map[string]*virtv1.VirtualMachineInstance{
		"recorded Block": claimVMI(blockInfo),
		"no record":      claimVMI(nil),
	} {
		got, err := Prepare(vmi, dirs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got["data"] != want {
			t.Errorf("%s: disk %+v, want %+v", name, got["data"], want)
		}
	}
	if _, err := os.Stat(filepath.Join(dirs.PVCRoot, "data", "disk.img")); !os.IsNotExist(err) {
		t.Errorf("a Block claim got a disk image: %v", err)
	}

	t.Run("a file where the device should be", func(t *testing.T) {
		dirs := claimDirs(t)
		write(t, filepath.Join(dirs.PVCDevices, "data"), make([]byte, 512))
		_, err := Prepare(claimVMI(blockInfo), dirs)
		if err == nil || !strings.Contains(err.Error(), "is not a block device") {
			t.Fatalf("Prepare error = %v, want a refusal of the regular file", err)
		}
	})
	t.Run("no device", func(t *testing.T) {
		_, err := Prepare(claimVMI(blockInfo), claimDirs(t))
		if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
			t.Fatalf("Prepare error = %v, want the missing device", err)
		}
	})
}
