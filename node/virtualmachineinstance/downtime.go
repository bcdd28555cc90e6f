package virtualmachineinstance

import virtv1 "kubevirt.dev/virt/apis/virtualization/v1"

// setDowntime records a completed migration's downtime in ms
// (migrationState.downtimeMilliseconds: libvirt's job statistics, as the
// target launcher reports them).
func setDowntime(ms *virtv1.VirtualMachineInstanceMigrationState, downtimeMs int64) {
	ms.DowntimeMilliseconds = downtimeMs
}
