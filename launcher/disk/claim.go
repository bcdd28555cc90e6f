package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// imageAlignment is what a created disk image's size is rounded down to:
// KubeVirt's, so that a guest sees the same disk size on either platform.
const imageAlignment = 1 << 20

// claimDisk is the disk of the persistentVolumeClaim volume: a Block claim's
// device itself, raw; on a Filesystem claim the image layout.DiskImageName,
// created sparse when the claim does not hold one yet and used as it is from
// then on: it holds the guest's data, so it is never recreated or shrunk.
// The claim's mode, capacity and file system overhead come from the VMI's
// status.volumeStatus, which virt-controller filled from the claim.
func claimDisk(vmi *virtv1.VirtualMachineInstance, volume string, dirs Dirs) (domain.Disk, error) {
	info := claimInfo(vmi, volume)
	dev := ""
	if dirs.PVCDevices != "" {
		dev = layout.PVCDevice(dirs.PVCDevices, volume)
	}
	if isBlock(info, dev) {
		return blockDevice(dev)
	}
	path := layout.DiskImage(dirs.PVCRoot, volume)
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return existing(path)
	case !errors.Is(err, fs.ErrNotExist):
		return domain.Disk{}, fmt.Errorf("disk image: %w", err)
	}
	size, err := imageSize(info)
	if err != nil {
		return domain.Disk{}, fmt.Errorf("create disk image %s: %w", path, err)
	}
	if err := createSparse(path, size); err != nil {
		return domain.Disk{}, err
	}
	return domain.Disk{Path: path, Format: domain.FormatRaw}, nil
}

// claimInfo is what virt-controller recorded of the volume's claim, nil if
// nothing.
func claimInfo(vmi *virtv1.VirtualMachineInstance, volume string) *virtv1.PersistentVolumeClaimInfo {
	for _, vs := range vmi.Status.VolumeStatus {
		if vs.Name == volume {
			return vs.PersistentVolumeClaimInfo
		}
	}
	return nil
}

// isBlock reports whether the claim is in Block mode: as recorded, or, with
// no record, whether the pod has the volume's device ("" when it has no
// devices).
func isBlock(info *virtv1.PersistentVolumeClaimInfo, dev string) bool {
	if info != nil && info.VolumeMode != nil {
		return *info.VolumeMode == corev1.PersistentVolumeBlock
	}
	if dev == "" {
		return false
	}
	st, err := os.Stat(dev)
	return err == nil && isBlockDevice(st.Mode())
}

func isBlockDevice(m fs.FileMode) bool {
	return m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0
}

// blockDevice is a Block claim's device, which the kubelet put at dev.
func blockDevice(dev string) (domain.Disk, error) {
	st, err := os.Stat(dev)
	if err != nil {
		return domain.Disk{}, fmt.Errorf("block device of the claim: %w", err)
	}
	if !isBlockDevice(st.Mode()) {
		return domain.Disk{}, fmt.Errorf("block device of the claim: %s is not a block device (%s)", dev, st.Mode().Type())
	}
	return domain.Disk{Path: dev, Format: domain.FormatRaw, Block: true}, nil
}

// imageSize is the size of a new disk image on a Filesystem claim, as
// KubeVirt sizes it: the bound volume's capacity less the file system's
// overhead, rounded down to whole MiB.
func imageSize(info *virtv1.PersistentVolumeClaimInfo) (int64, error) {
	if info == nil {
		return 0, fmt.Errorf("the claim's capacity is unknown: status.volumeStatus has no persistentVolumeClaimInfo for the volume")
	}
	capacity, ok := info.Capacity[corev1.ResourceStorage]
	if !ok || capacity.Sign() <= 0 {
		return 0, fmt.Errorf("the capacity of claim %q is unknown: is it bound?", info.ClaimName)
	}
	overhead := virtv1.DefaultFilesystemOverhead
	if info.FilesystemOverhead != nil {
		overhead = *info.FilesystemOverhead
	}
	// Exact arithmetic: a float would put the result a byte off for some
	// capacities, and the alignment could turn that into a MiB.
	share, ok := new(big.Rat).SetString(string(overhead))
	if !ok || share.Sign() < 0 || share.Cmp(big.NewRat(1, 1)) >= 0 {
		return 0, fmt.Errorf("filesystem overhead %q of claim %q is not a decimal in [0, 1)", overhead, info.ClaimName)
	}
	usable := new(big.Rat).Mul(new(big.Rat).SetInt64(capacity.Value()), new(big.Rat).Sub(big.NewRat(1, 1), share))
	// Below the capacity, so an int64 like it.
	size := new(big.Int).Quo(usable.Num(), usable.Denom()).Int64()
	aligned := size &^ (imageAlignment - 1)
	if aligned <= 0 {
		return 0, fmt.Errorf("capacity %s of claim %q leaves less than 1 MiB for the disk image after the file system overhead %s",
			capacity.String(), info.ClaimName, overhead)
	}
	return aligned, nil
}

// createSparse creates path as a sparse file of size bytes. The claim's
// directory is the volume's mount: it is never created here, since a missing
// one means the volume is not mounted.
func createSparse(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o660)
	if err != nil {
		return fmt.Errorf("create disk image: %w", err)
	}
	// Whatever the umask: the pod's group (its fsGroup) may use the image,
	// as it may the claim.
	if err := f.Chmod(0o660); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("create disk image %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("create disk image %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("create disk image %s: %w", path, err)
	}
	return nil
}
