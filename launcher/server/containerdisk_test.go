package server

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// The launcher is ready only once every container disk's record exists
// (disk.WaitForContainerDisks), and the node syncs only a ready launcher: a Sync
// that finds a record missing is a pod that will never have it, answered
// for good (FailedPrecondition), never Unavailable for the node to retry.
func TestSyncWithoutContainerDiskRecordIsPermanent(t *testing.T) {
	f := newFixture(t)
	f.vmi.Spec.Volumes = append(f.vmi.Spec.Volumes, virtv1.Volume{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "img"}}})
	f.vmi.Spec.Domain.Devices.Disks = append(f.vmi.Spec.Domain.Devices.Disks, virtv1.Disk{Name: "root"})
	_, err := f.sync(t)
	if status.Code(err) != codes.FailedPrecondition || !apiv1.SyncErrorIsPermanent(err) || !strings.Contains(err.Error(), "has not written") {
		t.Fatalf("Sync without the container disk's record: %v, want FailedPrecondition naming the record", err)
	}
	if d := f.state(t); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || f.srv.Started() {
		t.Errorf("after a refused Sync the domain is %v, want ABSENT", d)
	}
}
