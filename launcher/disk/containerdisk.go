package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
)

// ErrNotReady is wrapped by Prepare's error when a volume's file is not
// there yet but may come: the container of a containerDisk volume has not
// written its record. Asking again later can help; every other error of
// Prepare is there to stay.
var ErrNotReady = errors.New("not ready yet")

// QEMUImg is the qemu-img binary that creates the overlays of container
// disks (the launcher image's, from qemu-utils).
var QEMUImg = "qemu-img"

// containerDisk is the writable overlay of a containerDisk volume: a qcow2
// file in the pod's disks volume whose backing file is the disk in the
// volume's own container, opened through /proc/<pid>/root. The guest's
// writes go to the overlay, which dies with the pod: the next pod starts
// from the image again, as in KubeVirt. Nothing of the image is copied.
//
// The overlay is created anew on every call: Prepare runs before the
// launcher defines its domain, so no guest has written to it yet.
func containerDisk(disksDir, volume string) (domain.Disk, error) {
	overlay := layout.DiskImage(disksDir, volume)
	d := domain.Disk{Path: overlay, Format: domain.FormatQCOW2}
	recordPath := layout.ContainerDiskRecord(disksDir, volume)
	rec, err := layout.ReadContainerDisk(recordPath)
	if errors.Is(err, fs.ErrNotExist) {
		return d, fmt.Errorf("container disk: its container has not written %s: %w", recordPath, ErrNotReady)
	}
	if err != nil {
		return d, fmt.Errorf("container disk: %w", err)
	}
	if rec.Error != "" {
		return d, fmt.Errorf("container disk: its container found no disk: %s", rec.Error)
	}
	backing := rec.Source()
	f, err := os.Open(backing)
	if err != nil {
		if _, serr := os.Stat(filepath.Join("/proc", strconv.Itoa(rec.PID))); serr != nil {
			return d, fmt.Errorf("container disk: its container's process %d is gone (%v)", rec.PID, err)
		}
		return d, fmt.Errorf("container disk: %w", err)
	}
	format, err := Format(f)
	f.Close()
	if err != nil {
		return d, fmt.Errorf("container disk %s: %w", backing, err)
	}
	if err := createOverlay(overlay, backing, format); err != nil {
		return d, fmt.Errorf("container disk: %w", err)
	}
	return d, nil
}

// createOverlay creates a qcow2 file at path backed by backing, of format
// backingFormat, through a temporary file. qemu-img writes the backing's
// path and format into the overlay's header, where libvirt and QEMU find
// the chain; the overlay takes the backing's virtual size.
func createOverlay(path, backing, backingFormat string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	os.Remove(tmp)
	cmd := exec.Command(QEMUImg, "create", "-q", "-f", domain.FormatQCOW2, "-F", backingFormat, "-b", backing, tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create overlay of %s: %v: %s", backing, err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create overlay of %s: %w", backing, err)
	}
	return nil
}
