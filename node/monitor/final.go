package monitor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// ReadFinalState reads the domain a launcher recorded as it ended, from
// its private directory on the host. It returns nil and no error when the
// launcher recorded none (its guest never ran, or it was killed first).
func ReadFinalState(privateDir string) (*apiv1.Domain, error) {
	path := layout.FinalStateFile(privateDir)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read final state: %w", err)
	}
	d, err := apiv1.UnmarshalFinalState(data)
	if err != nil {
		return nil, fmt.Errorf("parse final state %s: %w", path, err)
	}
	return d, nil
}
