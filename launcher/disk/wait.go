package disk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"kubevirt.dev/virt/launcher/layout"
)

// RecordInterval is how often WaitForContainerDisks looks for the records:
// a stat per volume, on the path of every start (the node waits for the
// ready file that follows them).
const RecordInterval = 25 * time.Millisecond

// WaitForContainerDisks returns once the container of every containerDisk
// volume has written its record (layout.ContainerDiskRecord below
// disksDir), whatever the record says, or with ctx's error. The launcher
// writes its ready file only then: the node starts the guest as soon as
// the file is there, and a record that is missing then is a Prepare that
// can never succeed. A record that holds the container's error is there:
// the guest's start then fails with that error, at once, instead of the
// launcher never becoming ready.
func WaitForContainerDisks(ctx context.Context, disksDir string, volumes []string, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		missing, err := MissingRecords(disksDir, volumes)
		if err != nil {
			return err
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}

// MissingRecords are the volumes whose container has not written its
// record yet. An error other than a missing file is returned: the disks
// directory is the pod's, and a record that cannot be looked at will not
// become readable by waiting.
func MissingRecords(disksDir string, volumes []string) ([]string, error) {
	var missing []string
	for _, v := range volumes {
		_, err := os.Stat(layout.ContainerDiskRecord(disksDir, v))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, v)
		case err != nil:
			return nil, err
		}
	}
	return missing, nil
}
