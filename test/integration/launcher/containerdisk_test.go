package launcher_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/util/wait"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/layout"
)

// containerDiskMiB is the data in the test's container disk: the size of
// the images issue 16 measured start latency with.
const containerDiskMiB = 133

// holdContainer runs virt-imagecopy hold as the container of a containerDisk
// volume would: when the test runs as root, in a mount namespace of its own
// whose root is root (chroot), as the pod's user, with the launcher's disks
// directory bind-mounted at /disks; otherwise as a plain process of the
// test's user.
func holdContainer(t *testing.T, tool, root, disksDir, volume string) *exec.Cmd {
	t.Helper()
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		for _, d := range []string{"proc", "disks"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		copyFile(t, tool, filepath.Join(root, "virt-imagecopy"))
		os.Chmod(filepath.Join(root, "virt-imagecopy"), 0o755)
		script := `mount --bind "$1" "$2/disks" && mount -t proc proc "$2/proc" &&
exec chroot --userspec="$3:$3" "$2" /virt-imagecopy hold /disk "/disks/$4/` + layout.ContainerDiskRecordName + `" "$5"`
		cmd = exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script,
			"sh", disksDir, root, fmt.Sprint(podUID), volume, launcherBin)
	} else {
		cmd = exec.Command(tool, "hold", filepath.Join(root, "disk"), layout.ContainerDiskRecord(disksDir, volume), launcherBin)
	}
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the container disk's hold: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("hold output:\n%s", out.String())
		}
	})
	return cmd
}

// buildTool builds the static virt-imagecopy.
func buildTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "virt-imagecopy")
	build := exec.Command("go", "build", "-o", bin, "kubevirt.dev/virt/cmd/virt-imagecopy")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build virt-imagecopy: %v\n%s", err, out)
	}
	return bin
}

// makeImage writes a qcow2 of 1 GiB holding mib MiB of data.
func makeImage(t *testing.T, path string, mib int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"qemu-img", "create", "-q", "-f", "qcow2", path, "1G"},
		{"qemu-io", "-f", "qcow2", "-c", fmt.Sprintf("write -P 0x5a 0 %dM", mib), path},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
}

// dropCache evicts path from the page cache, as for an image just pulled
// onto a busy node.
func dropCache(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// A containerDisk volume is a qcow2 overlay over the disk its container
// holds, opened through /proc/<pid>/root by the launcher's user without
// capabilities: the launcher serves its socket but is not ready until the
// container has written its record, then the first Sync boots the guest on
// the overlay without copying the image, and the container ends once the
// launcher has.
func TestContainerDiskOverlay(t *testing.T) {
	vmi := guestVMI("cdisk", 30)
	vmi.Spec.Domain.Devices.Disks = append(vmi.Spec.Domain.Devices.Disks, virtv1.Disk{Name: "root"})
	vmi.Spec.Volumes = append(vmi.Spec.Volumes, virtv1.Volume{Name: "root", VolumeSource: virtv1.VolumeSource{
		ContainerDisk: &virtv1.ContainerDiskSource{Image: "guest-disk"}}})
	tool := buildTool(t)
	root := filepath.Join(t.TempDir(), "rootfs")
	image := filepath.Join(root, "disk", "disk.qcow2")
	makeImage(t, image, containerDiskMiB)
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(image)
	if err != nil {
		t.Fatal(err)
	}

	l := launch(t, vmi)
	disksDir := filepath.Join(filepath.Dir(l.private), "d")
	if err := os.MkdirAll(disksDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		chownTree(t, disksDir, podUID)
	}
	// Serving, not ready: the node would not sync this launcher yet.
	if _, err := l.client.Info(t.Context(), &apiv1.InfoRequest{}); err != nil {
		t.Fatalf("Info before the container disk's container ran: %v", err)
	}
	if l.isReady() {
		t.Fatal("the launcher is ready before the container disk's record exists")
	}

	hold := holdContainer(t, tool, root, disksDir, "root")
	l.waitReady()
	var rec layout.ContainerDisk
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(layout.ContainerDiskRecord(disksDir, "root"))
		return err == nil && json.Unmarshal(b, &rec) == nil, nil
	})
	if err != nil {
		t.Fatalf("the container disk's record: %v", err)
	}
	wantPath := image
	if os.Geteuid() == 0 {
		wantPath = "/disk/disk.qcow2"
	}
	if rec.PID != hold.Process.Pid || rec.Path != wantPath {
		t.Errorf("record %+v, want pid %d and path %s", rec, hold.Process.Pid, wantPath)
	}

	dropCache(t, image)
	syncToRunning, toMarker := boot(t, l)
	t.Logf("container disk of %d MiB: Sync to running %v (overlay included), to the guest's marker %v", containerDiskMiB, syncToRunning, toMarker)

	// QEMU reads the image in the container itself: no copy anywhere.
	open := false
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", l.qemuPid()))
	for _, fd := range fds {
		if st, err := os.Stat(fd); err == nil && os.SameFile(st, before) {
			open = true
		}
	}
	if !open {
		t.Errorf("QEMU (pid %d) has no descriptor of the container's image %s", l.qemuPid(), image)
	}
	// libvirt followed the overlay's chain by itself (the domain's XML
	// names the overlay only): its live XML has the backing store.
	live, _ := filepath.Glob(filepath.Join(layout.LibvirtRoot(l.private), "run", "qemu", "*.xml"))
	var liveXML []byte
	if len(live) == 1 {
		liveXML, _ = os.ReadFile(live[0])
	}
	if want := fmt.Sprintf("<source file='%s'", rec.Source()); !bytes.Contains(liveXML, []byte(want)) || !bytes.Contains(liveXML, []byte("<backingStore type='file'")) {
		t.Errorf("libvirt's live XML %v lacks the backing store %s:\n%s", live, want, liveXML)
	}
	overlay := layout.DiskImage(disksDir, "root")
	if st, err := os.Stat(overlay); err != nil || st.Size() > 4<<20 {
		t.Errorf("overlay %s: %v (%d bytes); want a small qcow2 file", overlay, err, st.Size())
	}

	l.cmd.Process.Signal(syscall.SIGTERM)
	if code := l.waitExit(exitTimeout); code != apiv1.ExitGuestShutdown {
		t.Errorf("launcher exited %d after SIGTERM, want %d", code, apiv1.ExitGuestShutdown)
	}
	held := make(chan error, 1)
	go func() { held <- hold.Wait() }()
	select {
	case err := <-held:
		if err != nil {
			t.Errorf("the hold ended with %v once the launcher had, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the hold still runs 10 s after the launcher ended: it would keep the pod Running")
	}
	if after, err := os.Stat(image); err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("the container's image changed: %v, %v; the guest writes to the overlay only", err, after)
	}
}

// What issue 16 asked to measure: the launcher-side cost of a container
// disk, a copy of the image (the init container before) against the qcow2
// overlay over it (disk.Prepare now), each from a cold page cache.
func TestContainerDiskCopyVersusOverlay(t *testing.T) {
	dir := t.TempDir()
	image := filepath.Join(dir, "image", "disk.qcow2")
	makeImage(t, image, containerDiskMiB)
	disks := filepath.Join(dir, "disks")
	// The test's own process stands in for the container: its root is
	// the host's.
	rec, _ := json.Marshal(layout.ContainerDisk{PID: os.Getpid(), Path: image})
	if err := os.MkdirAll(filepath.Join(disks, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(layout.ContainerDiskRecord(disks, "root"), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	vmi := &virtv1.VirtualMachineInstance{Spec: virtv1.VirtualMachineInstanceSpec{Volumes: []virtv1.Volume{{
		Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "guest-disk"}}}}}}
	for i := range 3 {
		copied := filepath.Join(dir, "copy", "disk.img")
		dropCache(t, image)
		start := time.Now()
		copyAndSync(t, image, copied)
		copyTime := time.Since(start)
		os.Remove(copied)

		dropCache(t, image)
		start = time.Now()
		if _, err := disk.Prepare(vmi, disk.Dirs{Disks: disks}); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: copy of the %d MiB image (with fsync) %v; qcow2 overlay over it %v", i+1, containerDiskMiB, copyTime, time.Since(start))
	}
}

// copyAndSync copies from to to and syncs it, as a pod's init container
// once copied a container disk before its guest could start.
func copyAndSync(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Sync(); err != nil {
		t.Fatal(err)
	}
}
