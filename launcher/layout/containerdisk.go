package layout

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// ContainerDiskRecordName is the file in DisksDir/<volume>/ through which the
// container of a containerDisk volume tells the launcher where its disk is.
// The container (virt-imagecopy hold) writes it once, atomically, and then
// keeps running so that its root filesystem, and the disk in it, stays
// reachable; the launcher reads it before defining the domain.
const ContainerDiskRecordName = "containerdisk.json"

// ContainerDiskRecord is the record of a containerDisk volume below DisksDir.
func ContainerDiskRecord(disksDir, volume string) string {
	return filepath.Join(disksDir, volume, ContainerDiskRecordName)
}

// ContainerDisk is the content of a ContainerDiskRecord (JSON): either where
// the disk is, or why the container found none.
type ContainerDisk struct {
	// PID is the container's process in the pod's shared PID namespace
	// (shareProcessNamespace), the same number for every container.
	PID int `json:"pid,omitempty"`
	// Path is the disk file inside the container's root filesystem.
	Path string `json:"path,omitempty"`
	// Error says why the container has no disk to offer (no file, several,
	// unreadable): the volume can never be used in this pod.
	Error string `json:"error,omitempty"`
}

// Source is the disk as the other processes of the pod open it: through the
// container's root, /proc/<pid>/root/<path>. The kernel allows that to
// processes that may ptrace-read the container's process, which a process of
// the same user without capabilities may.
func (c ContainerDisk) Source() string {
	return filepath.Join("/proc", strconv.Itoa(c.PID), "root", c.Path)
}

// ReadContainerDisk reads the record at path, as a holder (virt-imagecopy
// hold) wrote it: the error wraps fs.ErrNotExist while it has not, and
// says so for a record that names no process and absolute path. A record
// of a holder that found no file has only Error set, for the caller to say
// what was missing.
func ReadContainerDisk(path string) (ContainerDisk, error) {
	var rec ContainerDisk
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("record %s: %w", path, err)
	}
	if rec.Error == "" && (rec.PID <= 0 || !filepath.IsAbs(rec.Path)) {
		return rec, fmt.Errorf("record %s names no process and absolute path: %s", path, b)
	}
	return rec, nil
}
