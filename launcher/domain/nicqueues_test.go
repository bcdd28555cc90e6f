package domain

import (
	"testing"

	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestNICQueues: networkInterfaceMultiqueue gives each virtio NIC one queue
// per vCPU, capped, without a driver name (vhost where libvirt may, QEMU's
// own under TCG); one vCPU or the option off leaves the NIC single-queue.
func TestNICQueues(t *testing.T) {
	for _, tc := range []struct {
		name       string
		multiqueue *bool
		cores      uint32
		want       uint
	}{
		{"off", nil, 4, 0},
		{"one vCPU", ptr.To(true), 1, 0},
		{"two vCPUs", ptr.To(true), 2, 2},
		{"capped", ptr.To(true), 16, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newVMI(func(v *virtv1.VirtualMachineInstance) {
				v.Spec.Domain.CPU = &virtv1.CPU{Cores: tc.cores}
				v.Spec.Domain.Devices.NetworkInterfaceMultiQueue = tc.multiqueue
			})
			d, err := Convert(vmi, testHost())
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Devices.Interfaces) != 1 {
				t.Fatalf("%d interfaces, want 1", len(d.Devices.Interfaces))
			}
			drv := d.Devices.Interfaces[0].Driver
			switch {
			case tc.want == 0 && drv != nil:
				t.Errorf("driver %+v, want none", drv)
			case tc.want > 0 && (drv == nil || drv.Queues != tc.want || drv.Name != ""):
				t.Errorf("driver %+v, want queues %d and no name", drv, tc.want)
			}
		})
	}
}
