package server

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

func (f *fixture) addContainerDisk() {
	f.vmi.Spec.Volumes = append(f.vmi.Spec.Volumes, virtv1.Volume{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "img"}}})
	f.vmi.Spec.Domain.Devices.Disks = append(f.vmi.Spec.Domain.Devices.Disks, virtv1.Disk{Name: "root"})
}

func (f *fixture) writeContainerDiskRecord(t *testing.T, rec layout.ContainerDisk) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path := layout.ContainerDiskRecord(filepath.Join(f.dir, "disks"), "root")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Until the container of a containerDisk volume has said where its disk is,
// Sync answers Unavailable, which the node retries; once it has, Sync
// starts the guest on an overlay of that disk.
func TestSyncWaitsForContainerDisk(t *testing.T) {
	f := newFixture(t)
	f.addContainerDisk()
	_, err := f.sync(t)
	if status.Code(err) != codes.Unavailable || apiv1.SyncErrorIsPermanent(err) {
		t.Fatalf("Sync before the container disk's record: %v, want Unavailable (retryable)", err)
	}
	if f.srv.Started() {
		t.Fatal("the domain started without its container disk")
	}

	image := filepath.Join(t.TempDir(), "disk.img")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", image, "16M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v\n%s", err, out)
	}
	// The test's own process stands in for the container: its root is
	// the host's.
	f.writeContainerDiskRecord(t, layout.ContainerDisk{PID: os.Getpid(), Path: image})
	d, err := f.sync(t)
	if err != nil {
		t.Fatalf("Sync once the record is there: %v", err)
	}
	if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("domain %v, want RUNNING", d.State)
	}
	if _, err := os.Stat(layout.DiskImage(filepath.Join(f.dir, "disks"), "root")); err != nil {
		t.Errorf("the container disk's overlay: %v", err)
	}
}

// The wait is bounded: a record that does not come within VolumeWait
// will not, and Sync then says so for good.
func TestSyncGivesUpOnContainerDisk(t *testing.T) {
	f := newFixture(t)
	f.addContainerDisk()
	if _, err := f.sync(t); status.Code(err) != codes.Unavailable {
		t.Fatalf("first Sync: %v, want Unavailable", err)
	}
	f.srv.mu.Lock()
	f.srv.cfg.VolumeWait = time.Nanosecond
	f.srv.mu.Unlock()
	_, err := f.sync(t)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("Sync after VolumeWait: %v, want FailedPrecondition (permanent)", err)
	}
}

// A container that found no disk in its image is a VMI that never runs in
// this pod.
func TestSyncOfContainerWithoutDiskIsPermanent(t *testing.T) {
	f := newFixture(t)
	f.addContainerDisk()
	f.writeContainerDiskRecord(t, layout.ContainerDisk{Error: "source directory /disk holds no regular file; it must hold exactly one"})
	_, err := f.sync(t)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "holds no regular file") {
		t.Fatalf("Sync: %v, want FailedPrecondition with the container's reason", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || f.srv.Started() {
		t.Errorf("after a refused Sync the domain is %v, want ABSENT", d)
	}
}
