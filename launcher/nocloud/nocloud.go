package nocloud

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kdomanski/iso9660"
)

// VolumeLabel is the label cloud-init's NoCloud datasource looks for.
const VolumeLabel = "cidata"

// Data is the content of a NoCloud ISO.
type Data struct {
	UserData string
	MetaData string
	// NetworkConfig is written only when not empty.
	NetworkConfig string
}

// MetaData is a NoCloud meta-data document. cloud-init reruns its per-instance
// modules when instanceID changes.
func MetaData(instanceID, hostname string) string {
	return fmt.Sprintf("instance-id: %s\nlocal-hostname: %s\n", instanceID, hostname)
}

// Write writes the ISO to path, replacing it atomically.
func Write(path string, data Data) error {
	w, err := iso9660.NewWriter()
	if err != nil {
		return fmt.Errorf("nocloud ISO: %w", err)
	}
	defer w.Cleanup()
	files := []struct{ name, content string }{
		{"user-data", data.UserData},
		{"meta-data", data.MetaData},
	}
	if data.NetworkConfig != "" {
		files = append(files, struct{ name, content string }{"network-config", data.NetworkConfig})
	}
	for _, f := range files {
		if err := w.AddFile(strings.NewReader(f.content), f.name); err != nil {
			return fmt.Errorf("nocloud ISO: add %s: %w", f.name, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("nocloud ISO: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nocloud-*")
	if err != nil {
		return fmt.Errorf("nocloud ISO: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := w.WriteTo(tmp, VolumeLabel); err != nil {
		tmp.Close()
		return fmt.Errorf("nocloud ISO: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("nocloud ISO: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("nocloud ISO: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("nocloud ISO: %w", err)
	}
	return nil
}
