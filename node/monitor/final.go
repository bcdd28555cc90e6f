package monitor

import (
	"errors"
	"fmt"
	"io/fs"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// ReadFinalState reads the domain a launcher recorded as it ended, from
// its private directory on the host. It returns nil and no error when the
// launcher recorded none (its guest never ran, or it was killed first).
// The tenant controls the file: anything but a regular file of at most
// apiv1.MaxFinalStateBytes is refused (podfs).
func ReadFinalState(privateDir podfs.Dir) (*apiv1.Domain, error) {
	data, err := privateDir.ReadFile(layout.FinalStateName, apiv1.MaxFinalStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read final state: %w", err)
	}
	d, err := apiv1.UnmarshalFinalState(data)
	if err != nil {
		return nil, fmt.Errorf("parse final state in %s: %w", privateDir, err)
	}
	return d, nil
}
