package disk

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// container starts a process standing in for a container-disk container:
// the disk is opened through its /proc/<pid>/root, which for a process of
// the test's mount namespace is the host's root.
func container(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the stand-in container: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func writeRecord(t *testing.T, disksDir, volume string, rec layout.ContainerDisk) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	write(t, layout.ContainerDiskRecord(disksDir, volume), b)
}

func containerDiskVMI(volume string) *virtv1.VirtualMachineInstance {
	return vmiWith(virtv1.Volume{Name: volume, VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:1"}}})
}

// A container disk becomes a qcow2 overlay in the disks directory backed by
// the disk in its container, of either format: the guest's writes land in
// the overlay, the image stays as it was, and a new overlay starts from the
// image again.
func TestPrepareContainerDisk(t *testing.T) {
	for _, format := range []string{domain.FormatQCOW2, domain.FormatRaw} {
		t.Run(format, func(t *testing.T) {
			image := filepath.Join(t.TempDir(), "disk", "image."+format)
			os.MkdirAll(filepath.Dir(image), 0o755)
			run(t, "qemu-img", "create", "-q", "-f", format, image, "16M")
			run(t, "qemu-io", "-f", format, "-c", "write -P 0x11 0 1M", image)
			pid := container(t)
			dirs := Dirs{Disks: t.TempDir()}
			writeRecord(t, dirs.Disks, "root", layout.ContainerDisk{PID: pid, Path: image})

			got, err := Prepare(containerDiskVMI("root"), dirs)
			if err != nil {
				t.Fatal(err)
			}
			overlay := layout.DiskImage(dirs.Disks, "root")
			if want := (domain.Disk{Path: overlay, Format: domain.FormatQCOW2}); got["root"] != want {
				t.Fatalf("Prepare = %+v, want %+v", got["root"], want)
			}
			var info struct {
				Format          string `json:"format"`
				VirtualSize     int64  `json:"virtual-size"`
				BackingFilename string `json:"backing-filename"`
				BackingFormat   string `json:"backing-filename-format"`
			}
			if err := json.Unmarshal([]byte(run(t, "qemu-img", "info", "--output=json", overlay)), &info); err != nil {
				t.Fatal(err)
			}
			wantBacking := filepath.Join("/proc", strconv.Itoa(pid), "root", image)
			if info.Format != "qcow2" || info.VirtualSize != 16<<20 || info.BackingFilename != wantBacking || info.BackingFormat != format {
				t.Errorf("overlay %+v, want qcow2 of 16 MiB backed by %s (%s)", info, wantBacking, format)
			}

			run(t, "qemu-io", "-f", "qcow2", "-c", "write -P 0x22 0 64k", overlay)
			run(t, "qemu-io", "-f", "qcow2", "-c", "read -P 0x22 0 64k", "-c", "read -P 0x11 64k 64k", overlay)
			run(t, "qemu-io", "-r", "-f", format, "-c", "read -P 0x11 0 1M", image)

			if _, err := Prepare(containerDiskVMI("root"), dirs); err != nil {
				t.Fatalf("second Prepare: %v", err)
			}
			run(t, "qemu-io", "-f", "qcow2", "-c", "read -P 0x11 0 1M", overlay)
			if leftovers, _ := filepath.Glob(filepath.Join(dirs.Disks, "root", ".*")); len(leftovers) != 0 {
				t.Errorf("temporary files left behind: %v", leftovers)
			}
		})
	}
}

// Before its container has written the record, the volume is not ready: an
// error that asking again can cure.
func TestPrepareContainerDiskNotReady(t *testing.T) {
	_, err := Prepare(containerDiskVMI("root"), Dirs{Disks: t.TempDir()})
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("Prepare without a record = %v, want ErrNotReady", err)
	}
}

// Every other problem is there to stay, and says what it is.
func TestPrepareContainerDiskErrors(t *testing.T) {
	image := filepath.Join(t.TempDir(), "disk.img")
	write(t, image, make([]byte, 4096))
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		record string
		want   string
	}{
		"container found no disk": {`{"error":"source directory /disk holds 2 regular files"}`, "found no disk: source directory /disk holds 2 regular files"},
		"container gone":          {`{"pid":` + strconv.Itoa(gone.Process.Pid) + `,"path":"` + image + `"}`, "is gone"},
		"no such disk":            {`{"pid":` + strconv.Itoa(os.Getpid()) + `,"path":"/nonexistent/disk.img"}`, "no such file"},
		"relative path":           {`{"pid":` + strconv.Itoa(os.Getpid()) + `,"path":"disk.img"}`, "names no process and absolute path"},
		"garbage":                 {`{"pid":`, "record"},
	} {
		t.Run(name, func(t *testing.T) {
			dirs := Dirs{Disks: t.TempDir()}
			write(t, layout.ContainerDiskRecord(dirs.Disks, "root"), []byte(tc.record))
			_, err := Prepare(containerDiskVMI("root"), dirs)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNotReady) {
				t.Fatalf("Prepare = %v, want a lasting error containing %q", err, tc.want)
			}
		})
	}
}
