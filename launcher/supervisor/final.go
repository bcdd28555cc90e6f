package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// writeFinal records the final domain next to the socket, so a node daemon
// that was not connected when the guest ended still learns how.
func writeFinal(path string, d *apiv1.Domain) error {
	if path == "" {
		return nil
	}
	data, err := apiv1.MarshalFinalState(d)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write final state: %w", err)
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write final state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write final state: %w", err), os.Remove(tmp))
	}
	return nil
}
