package isoimage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kdomanski/iso9660"
)

// File is one file of an image: Name is a slash-separated path inside it.
type File struct {
	Name string
	Data []byte
}

// Write writes an ISO labelled label holding files to path, replacing it
// atomically (a reader never sees half an image), mode 0644 so the QEMU of
// the launcher's user opens it.
func Write(path, label string, files []File) error {
	w, err := iso9660.NewWriter()
	if err != nil {
		return fmt.Errorf("ISO %s: %w", path, err)
	}
	defer w.Cleanup()
	for _, f := range files {
		if err := w.AddFile(bytes.NewReader(f.Data), f.Name); err != nil {
			return fmt.Errorf("ISO %s: add %s: %w", path, f.Name, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ISO %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".iso-*")
	if err != nil {
		return fmt.Errorf("ISO %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := w.WriteTo(tmp, label); err != nil {
		tmp.Close()
		return fmt.Errorf("ISO %s: write: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ISO %s: write: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("ISO %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("ISO %s: %w", path, err)
	}
	return nil
}
