package domain

import (
	"fmt"

	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// setDiskOptions converts a disk's cache, I/O mode, error policy, block
// size and sharing, on any bus.
func setDiskOptions(dd *libvirtxml.DomainDisk, disk *virtv1.Disk) error {
	drv := dd.Driver
	drv.Cache = string(disk.Cache)
	switch disk.IO {
	case "", virtv1.IODefault:
	case virtv1.IONative:
		// QEMU opens a file for native AIO only with O_DIRECT, that is
		// cache none: KubeVirt implies it, and so does this.
		if drv.Cache == "" {
			drv.Cache = string(virtv1.CacheNone)
		}
		if drv.Cache != string(virtv1.CacheNone) {
			return fmt.Errorf("disk %q: io native needs cache none, not %s", disk.Name, drv.Cache)
		}
		drv.IO = string(disk.IO)
	case virtv1.IOThreads:
		drv.IO = string(disk.IO)
	default:
		return fmt.Errorf("disk %q: unknown io %q", disk.Name, disk.IO)
	}
	if p := disk.ErrorPolicy; p != nil {
		drv.ErrorPolicy = string(*p)
	}
	if disk.Shareable != nil && *disk.Shareable {
		// Two writers must both see the disk itself, never a host cache.
		dd.Shareable = &libvirtxml.DomainDiskShareable{}
		if drv.Cache == "" {
			drv.Cache = string(virtv1.CacheNone)
		}
	}
	if bs := disk.BlockSize; bs != nil && bs.Custom != nil {
		dd.BlockIO = &libvirtxml.DomainDiskBlockIO{LogicalBlockSize: uint(bs.Custom.Logical), PhysicalBlockSize: uint(bs.Custom.Physical)}
		if g := bs.Custom.DiscardGranularity; g != nil {
			dd.BlockIO.DiscardGranularity = ptrUint(uint(*g))
		}
	}
	return nil
}

// setVirtioDiskOptions converts what only virtio disks have: the
// transitional model, one queue per vCPU (blockMultiQueue) and I/O threads.
func setVirtioDiskOptions(d *libvirtxml.Domain, dd *libvirtxml.DomainDisk, disk *virtv1.Disk, spec virtv1.DomainSpec, threads *ioThreads) error {
	if spec.Devices.UseVirtioTransitional != nil && *spec.Devices.UseVirtioTransitional {
		dd.Model = "virtio-transitional"
	}
	if q := spec.Devices.BlockMultiQueue; q != nil && *q && d.VCPU != nil {
		dd.Driver.Queues = ptrUint(d.VCPU.Value)
	}
	if id := threads.assign(disk); id != 0 {
		dd.Driver.IOThread = ptrUint(id)
	}
	return nil
}

// ioThreads hands out QEMU I/O threads to virtio disks: a disk with
// dedicatedIOThread gets one of its own; the others share one (policy
// shared) or a pool of up to two per vCPU, round-robin (policy auto), as
// KubeVirt does. Without a policy they run in QEMU's main loop.
type ioThreads struct {
	policy virtv1.IOThreadsPolicy
	// pool is the size of the auto pool; shared is a pool of one.
	pool, count uint
	next        uint
	// first is the id of the pool's first thread, 0 before it is made.
	first uint
}

func newIOThreads(spec *virtv1.DomainSpec) *ioThreads {
	t := &ioThreads{}
	if spec.IOThreadsPolicy != nil {
		t.policy = *spec.IOThreadsPolicy
	}
	switch t.policy {
	case virtv1.IOThreadsPolicyShared:
		t.pool = 1
	case virtv1.IOThreadsPolicyAuto:
		vcpus := uint(1)
		if c := spec.CPU; c != nil {
			vcpus = uint(c.Sockets * c.Cores * c.Threads)
		}
		shared := uint(0)
		for _, disk := range spec.Devices.Disks {
			if isVirtioDisk(&disk) && (disk.DedicatedIOThread == nil || !*disk.DedicatedIOThread) {
				shared++
			}
		}
		t.pool = min(shared, 2*vcpus)
	}
	return t
}

// assign returns the I/O thread id of a virtio disk, 0 for none.
func (t *ioThreads) assign(disk *virtv1.Disk) uint {
	if disk.DedicatedIOThread != nil && *disk.DedicatedIOThread {
		t.count++
		return t.count
	}
	if t.pool == 0 {
		return 0
	}
	if t.first == 0 {
		t.first = t.count + 1
		t.count += t.pool
	}
	id := t.first + t.next%t.pool
	t.next++
	return id
}

func isVirtioDisk(disk *virtv1.Disk) bool {
	return disk.Disk != nil && disk.Disk.Bus == virtv1.DiskBusVirtio
}

func ptrUint(v uint) *uint { return &v }
