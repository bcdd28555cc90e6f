package monitor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"google.golang.org/protobuf/encoding/protojson"

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
	d := &apiv1.Domain{}
	// Unknown fields come from newer launchers: fields are only added.
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, d); err != nil {
		return nil, fmt.Errorf("parse final state %s: %w", path, err)
	}
	return d, nil
}
